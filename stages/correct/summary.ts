// What correct says at the end, next to the paper (500 dialogues, 2.4 turns each, five kinds of
// mistake): dialogues and turns by way of DialogueTally, the mix of mistakes actually observed, how
// many were logical errors caught by a check, and why the other records were dropped.
import { z } from "zod";
import { type DialogueMethod, methodTallyKeys } from "../../pipeline/dialogue.js";
import type { StageContext, StageTally } from "../../pipeline/stage.js";
import { countsLine, countsSchema, tallyDialogues } from "../dialogue-kit/summary.js";
import type { CorrectConfig } from "./config.js";
import { PAPER_ERROR_TYPES } from "./error-type.js";

export const CODE_CORRECTION = {
  name: "code-correction",
  prefix: "corr",
  paper: { dialogues: 500, turnsPerDialogue: 2.4 },
  card: "code correction (faulty answers corrected from their execution errors)",
} as const satisfies DialogueMethod;

/** Correct's summary, as its manifest keeps it. */
export const correctSummarySchema = z.object({
  ...methodTallyKeys([CODE_CORRECTION]),
  error_types: countsSchema,
  paper_error_types: z.array(z.string()),
  checked: z.number(),
  rejects: countsSchema,
});
export type CorrectSummary = z.infer<typeof correctSummarySchema>;

export async function summarizeCorrect(
  ctx: StageContext<CorrectConfig>,
  _services: unknown,
  { rejectReasons }: StageTally,
): Promise<CorrectSummary> {
  const errorTypes: Record<string, number> = Object.fromEntries(
    [...PAPER_ERROR_TYPES, "other"].map((t) => [t, 0]),
  );
  let checked = 0;
  const tally = await tallyDialogues(ctx, (dialogue) => {
    const type = String(dialogue.meta.error_type ?? "other");
    errorTypes[type] = (errorTypes[type] ?? 0) + 1;
    if (dialogue.meta.checked === true) checked++;
  });
  ctx.log.info(
    `mistakes observed: ${countsLine(errorTypes)} (paper: syntax, logical, type, name and time-out errors)`,
  );
  const dropped = countsLine(rejectReasons);
  if (dropped) ctx.log.info(`dropped: ${dropped}`);
  return {
    ...tally.result(),
    error_types: errorTypes,
    paper_error_types: [...PAPER_ERROR_TYPES],
    checked,
    // the runner counted them as they were committed
    rejects: { ...rejectReasons },
  };
}
