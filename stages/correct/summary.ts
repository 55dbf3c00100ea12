// What correct says at the end, next to the paper (500 dialogues, 2.4 turns each, five kinds of
// mistake): dialogues and turns by way of DialogueTally, the mix of mistakes actually observed, how
// many were logical errors caught by a check, and why the other records were dropped.
import { z } from "zod";
import { DialogueTally, methodTallyKeys, parseDialogue } from "../../pipeline/dialogue.js";
import type { StageContext, StageTally } from "../../pipeline/stage.js";
import type { CorrectConfig } from "./config.js";
import { PAPER_ERROR_TYPES } from "./error-type.js";

/** Correct's summary, as its manifest keeps it. */
export const correctSummarySchema = z.object({
  ...methodTallyKeys(["code-correction"]),
  error_types: z.record(z.string(), z.number()),
  paper_error_types: z.array(z.string()),
  checked: z.number(),
  rejects: z.record(z.string(), z.number()),
});
export type CorrectSummary = z.infer<typeof correctSummarySchema>;

export async function summarizeCorrect(
  ctx: StageContext<CorrectConfig>,
  _services: unknown,
  { rejectReasons }: StageTally,
): Promise<CorrectSummary> {
  const tally = new DialogueTally();
  const errorTypes: Record<string, number> = Object.fromEntries(
    [...PAPER_ERROR_TYPES, "other"].map((t) => [t, 0]),
  );
  let checked = 0;
  for await (const record of ctx.read(ctx.name)) {
    const parsed = parseDialogue(record);
    if (!parsed.ok) continue;
    tally.add(parsed.dialogue);
    const type = String(parsed.dialogue.meta.error_type ?? "other");
    errorTypes[type] = (errorTypes[type] ?? 0) + 1;
    if (parsed.dialogue.meta.checked === true) checked++;
  }
  // the runner counted them as they were committed
  const rejects = { ...rejectReasons };
  for (const line of tally.describe()) ctx.log.info(line);
  ctx.log.info(
    `mistakes observed: ${Object.entries(errorTypes)
      .map(([t, n]) => `${t} ${n}`)
      .join(", ")} (paper: syntax, logical, type, name and time-out errors)`,
  );
  const dropped = Object.entries(rejects)
    .map(([r, n]) => `${r} ${n}`)
    .join(", ");
  if (dropped) ctx.log.info(`dropped: ${dropped}`);
  return {
    ...tally.result(),
    error_types: errorTypes,
    paper_error_types: [...PAPER_ERROR_TYPES],
    checked,
    rejects,
  };
}
