// `stages.leetcode` in the config. Defaults are the paper's figures (303 similar-problem dialogues of
// 2.2 turns, 200 follow-up dialogues of 3.8 turns) and TACO as `download` fetches it; how tags are
// matched, how solutions are validated and which languages a follow-up may ask for are ours.
import { z } from "zod";
import { LANGUAGE_NAMES } from "../../pipeline/code/languages.js";
import { sandboxSettingsShape } from "../../pipeline/execution/settings.js";
import { operational } from "../../pipeline/hash.js";

export const FOLLOW_UP_KINDS = ["complexity", "alternative", "language"] as const;
export type FollowUpKind = (typeof FOLLOW_UP_KINDS)[number];

const tagsSchema = z
  .object({
    /** TACO columns whose labels count as tags (`tags`: LeetCode's topic tags; `skill_types` too if wanted) */
    fields: z
      .array(z.enum(["tags", "skill_types"]))
      .min(1)
      .default(["tags"]),
    /** `any`: two problems match when they share at least `min_shared` tags; `all`: same tag set */
    match: z.enum(["any", "all"]).default("any"),
    min_shared: z.number().int().min(1).default(1),
    /** tags too broad to say two problems are alike (compared case-insensitively) */
    ignore: z.array(z.string().min(1)).default([]),
  })
  .strict();

const validationSchema = z
  .object({
    /** solutions tried per problem, in TACO's order (real rows hold up to hundreds) */
    max_solutions: z.number().int().min(1).default(10),
    /** test cases run per solution: the first N of `input_output` */
    max_tests: z.number().int().min(1).default(20),
    /** limits of a run (one stdin/stdout case, or a function-call program running every case), and tries */
    ...sandboxSettingsShape,
    /** sandbox runs at once; default: the sandbox's workers, else 2 */
    concurrency: operational(z.number().int().min(1).optional()),
  })
  .strict();

const similarSchema = z
  .object({
    enabled: z.boolean().default(true),
    /** at most this many dialogues (paper: 303) */
    target: z.number().int().min(0).default(303),
    /** problems per dialogue: one size is drawn per dialogue, weighted (default 4:1, i.e. 2.2 on average) */
    group_size: z.array(z.number().int().min(2).max(16)).min(1).default([2, 3]),
    group_size_weights: z.array(z.number().positive()).optional(),
    tags: tagsSchema.default(tagsSchema.parse({})),
  })
  .strict()
  .superRefine((c, ctx) => {
    const weights = c.group_size_weights;
    if (weights && weights.length !== c.group_size.length) {
      ctx.addIssue({
        code: "custom",
        path: ["group_size_weights"],
        message: `give one weight per group size (${c.group_size.length} sizes, ${weights.length} weights)`,
      });
    }
  });

const followUpSchema = z
  .object({
    enabled: z.boolean().default(true),
    /** at most this many dialogues (paper: 200) */
    target: z.number().int().min(0).default(200),
    /**
     * follow-ups a dialogue may hold, in this order: `complexity` (TACO's expected time/space
     * complexity, answered by another validated solution), `alternative` (another validated
     * solution, where TACO gives no expected complexity), `language` (a translation that passes)
     */
    kinds: z.array(z.enum(FOLLOW_UP_KINDS)).min(1).default(["complexity", "alternative", "language"]),
    /** languages a `language` follow-up may ask for; each must have an evaluation harness */
    languages: z.array(z.enum(LANGUAGE_NAMES)).default(["java", "cpp", "javascript"]),
    /** at most this many translations in one dialogue */
    languages_per_dialogue: z.number().int().min(0).default(2),
    /** turns per dialogue at most (the problem itself is the first) */
    max_turns: z.number().int().min(2).default(4),
  })
  .strict();

export const leetcodeConfigSchema = z
  .object({
    /** the `download` source whose files are TACO's Parquet files */
    source: z.string().min(1).default("taco"),
    /** TACO `source` values kept (lower case): LeetCode's rows by default */
    sources: z.array(z.string().min(1)).min(1).default(["leetcode"]),
    /** a raw row longer than this many bytes is rejected (`row-too-large`) without being held */
    max_row_bytes: z
      .number()
      .int()
      .positive()
      .default(64 * 1024 * 1024),
    /** the LLM role that writes the text before each solution and translates (paper: GPT-4) */
    role: z.string().min(1).default("strong"),
    /** seed of every draw (groups, solution order, follow-up wording): same seed, same dialogues */
    seed: z.number().int().min(0).default(42),
    /**
     * dialogues written at once; each has one request in flight (a turn's text waits for the one
     * before), so the default is the role's requests in flight (`llm.<role>.concurrency`)
     */
    concurrency: operational(z.number().int().min(1).optional()),
    validation: validationSchema.default(validationSchema.parse({})),
    similar: similarSchema.default(similarSchema.parse({})),
    follow_up: followUpSchema.default(followUpSchema.parse({})),
    /** `--dry-run`: tokens assumed for an answer (a text, a translation) no cached answer gives */
    estimate: operational(
      z
        .object({ completion_tokens: z.number().int().min(1).default(300) })
        .strict()
        .prefault({}),
    ),
  })
  .strict();
export type LeetcodeConfig = z.infer<typeof leetcodeConfigSchema>;
