// What simulate says at the end, next to the paper (51K dialogues, 3.0 turns each): dialogues, turns
// and turns per dialogue by way of DialogueTally; how many dialogues end with code that runs, and how
// many with code that never ran because the cap held; how the
// executions went; which feedback categories the reviewer chose; why records were rejected.
import { z } from "zod";
import { type DialogueMethod, methodTallyKeys } from "../../pipeline/dialogue.js";
import type { StageContext, StageTally } from "../../pipeline/stage.js";
import { countsLine, countsSchema, tallyDialogues } from "../dialogue-kit/summary.js";
import { FEEDBACK_CATEGORIES } from "./categories.js";
import type { SimulateConfig } from "./config.js";
import type { ExecutionEntry } from "./interaction.js";

export const INTERACTION_SIMULATION = {
  name: "interaction-simulation",
  prefix: "sim",
  paper: { dialogues: 51_000, turnsPerDialogue: 3.0 },
  card: "interaction simulation (a weaker model answers, its code runs, a stronger model simulates the user's feedback and the fixes)",
} as const satisfies DialogueMethod;

/** Simulate's summary, as its manifest keeps it. */
export const simulateSummarySchema = z.object({
  ...methodTallyKeys([INTERACTION_SIMULATION]),
  passing: z.number(),
  passing_share: z.number(),
  capped: z.number(),
  ends_unrun: z.number(),
  feedback_categories: countsSchema,
  execution_statuses: countsSchema,
  iterations: countsSchema,
  rejects: countsSchema,
});
export type SimulateSummary = z.infer<typeof simulateSummarySchema>;

const count = (map: Record<string, number>, key: string) => {
  map[key] = (map[key] ?? 0) + 1;
};

export async function summarizeSimulate(
  ctx: StageContext<SimulateConfig>,
  _services: unknown,
  { rejectReasons }: StageTally,
): Promise<SimulateSummary> {
  let dialogues = 0;
  let passing = 0;
  let capped = 0;
  let endsUnrun = 0;
  const categories: Record<string, number> = Object.fromEntries(FEEDBACK_CATEGORIES.map((c) => [c, 0]));
  const statuses: Record<string, number> = {};
  const iterations: Record<string, number> = {};
  const tally = await tallyDialogues(ctx, (d) => {
    dialogues++;
    if (d.meta.passed === true) passing++;
    if (d.meta.capped === true) capped++;
    if (d.meta.ends_unrun === true) endsUnrun++;
    for (const f of (d.meta.feedback as { category?: string }[] | undefined) ?? []) {
      count(categories, f.category ?? "unclassified");
    }
    for (const e of (d.meta.executions as ExecutionEntry[] | undefined) ?? []) count(statuses, e.status);
    count(iterations, String(d.meta.iterations ?? 0));
  });
  const result = {
    ...tally.result(),
    passing,
    passing_share: dialogues === 0 ? 0 : Math.round((passing / dialogues) * 1000) / 1000,
    capped,
    ends_unrun: endsUnrun,
    feedback_categories: categories,
    execution_statuses: statuses,
    iterations,
    // the runner counted them as they were committed
    rejects: { ...rejectReasons },
  };
  ctx.log.info(
    `${passing.toLocaleString("en-US")} of ${dialogues.toLocaleString("en-US")} dialogues end with code that runs; ` +
      `${capped.toLocaleString("en-US")} reached the cap of ${ctx.config.max_iterations} executions, ` +
      `${endsUnrun.toLocaleString("en-US")} of them in the last phase, so their last code never ran (validate runs it)`,
  );
  const chosen = countsLine(Object.fromEntries(Object.entries(categories).filter(([, n]) => n > 0)));
  if (chosen) ctx.log.info(`feedback categories: ${chosen}`);
  const rejected = countsLine(rejectReasons);
  if (rejected) ctx.log.info(`rejected: ${rejected}`);
  return result;
}
