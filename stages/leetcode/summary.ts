// What leetcode says at the end: dialogues and turns per dialogue next to the paper's (303 similar-
// problem dialogues of 2.2 turns, 200 follow-ups of 3.8), and what the dialogues cannot tell: rows
// read, problems kept, every solution's verdict, groups bypassed, translations dropped.
import { z } from "zod";
import { type DialogueMethod, DialogueTally, methodTallyKeys } from "../../pipeline/dialogue.js";
import type { StageContext } from "../../pipeline/stage.js";

const CARD = "LeetCode similar problems and follow-ups";
export const LEETCODE_SIMILAR_PROBLEM = {
  name: "leetcode-similar-problem",
  prefix: "lc-sim",
  paper: { dialogues: 303, turnsPerDialogue: 2.2 },
  card: CARD,
} as const satisfies DialogueMethod;
export const LEETCODE_FOLLOW_UP = {
  name: "leetcode-follow-up",
  prefix: "lc-fu",
  paper: { dialogues: 200, turnsPerDialogue: 3.8 },
  card: CARD,
} as const satisfies DialogueMethod;
export const LEETCODE_METHODS = [LEETCODE_SIMILAR_PROBLEM, LEETCODE_FOLLOW_UP] as const;

const counts = z.record(z.string(), z.number());

/** What a run of leetcode counted besides its dialogues. */
const leetcodeStatsSchema = z.object({
  read: z.object({
    files: z.number(),
    rows: z.number(),
    kept: z.number(),
    rejected: counts,
    /** rows of the TACO sources not wanted (codeforces, codechef...), by source */
    other_sources: counts,
  }),
  validation: z.object({
    problems: z.number(),
    usable: z.number(),
    solutions: counts,
    verdicts_computed: z.number(),
    verdicts_reused: z.number(),
  }),
  similar: z.object({ groups: z.number(), bypassed: z.number(), untagged: z.number(), rejected: z.number() }),
  follow_up: z.object({
    planned: z.number(),
    translations: z.number(),
    translations_dropped: counts,
    all_dropped: z.number(),
    rejected: z.number(),
  }),
});
export type LeetcodeStats = z.infer<typeof leetcodeStatsSchema>;

/** Leetcode's summary, as its manifest keeps it: the dialogues, and LeetcodeStats once it has run. */
export const leetcodeSummarySchema = z.object({
  ...methodTallyKeys(LEETCODE_METHODS),
  ...leetcodeStatsSchema.partial().shape,
});
export type LeetcodeSummary = z.infer<typeof leetcodeSummarySchema>;

export async function summarizeLeetcode(
  ctx: StageContext<unknown>,
  stats: LeetcodeStats | undefined,
): Promise<LeetcodeSummary> {
  const { log } = ctx;
  const tally = await DialogueTally.of(LEETCODE_METHODS, ctx.read(ctx.name));
  for (const line of tally.describe()) log.info(line);
  if (stats) {
    const s = stats.validation.solutions;
    log.info(
      `TACO: ${stats.read.rows.toLocaleString("en-US")} rows read, ${stats.read.kept.toLocaleString("en-US")} LeetCode problems, ` +
        `${stats.validation.usable.toLocaleString("en-US")} with a passing solution`,
    );
    log.info(
      `solutions: ${s.passed} passed, ${s["wrong-answer"]} wrong answer, ${s["runtime-error"]} runtime error, ` +
        `${s.timeout} timed out, ${s.error} other errors, ${s.duplicate} duplicates, ${s["beyond-max"]} beyond max_solutions ` +
        `(${stats.validation.verdicts_reused} verdicts read back from the work dir)`,
    );
  }
  return { ...tally.result(), ...(stats ?? {}) };
}
