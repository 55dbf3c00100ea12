// `stages.filter` in the config. The defaults are the paper's: Qwen-72B-Chat (the `scorer` role)
// rates each query with Query Filtering Prompt 1, keeps 4-5, rates the survivors with the second
// prompt, keeps 4-5 again.
import { z } from "zod";
import { operational } from "../../pipeline/hash.js";

export const DEFAULT_REMINDER =
  "Please answer with the score first: one whole number from 1 to 5, chosen from the list above, " +
  "then explain why.";

export const filterConfigSchema = z
  .object({
    /** prompt per round: a name in prompts/ (without .md) or a path to your own Markdown prompt */
    rounds: z.array(z.string().min(1)).min(1).default(["complexity-1", "complexity-2"]),
    /** a record is kept when every round it went through scored at least this */
    threshold: z.number().int().min(1).max(5).default(4),
    /**
     * sequential: a round only sees the survivors of the previous one (the paper);
     * every: every record is scored by every round, and kept only if all of them pass.
     */
    rule: z.enum(["sequential", "every"]).default("sequential"),
    /** the LLM role that scores */
    role: z.string().min(1).default("scorer"),
    /** sent once, as a follow-up turn, when an answer has no readable score */
    reminder: z.string().min(1).default(DEFAULT_REMINDER),
    /** records in flight; default: twice the role's request limit (see the stage's `concurrency`) */
    concurrency: operational(z.number().int().positive().optional()),
    /** assumptions of `run --dry-run` for answers not in the cache */
    estimate: operational(
      z
        .object({
          /** share of a round's records that pass it (paper, round 1: 191,122 of 287,252) */
          pass_rate: z.number().min(0).max(1).default(0.665),
          /** tokens of a typical answer: a score and a few sentences of rationale */
          completion_tokens: z.number().int().positive().default(120),
        })
        .strict()
        .prefault({}),
    ),
  })
  .strict();

export type FilterConfig = z.infer<typeof filterConfigSchema>;
