// The `eval.model:` section: where the paper's four benchmarks come from (hub repos pinned by
// revision), how many rounds a task gets and with which feedback, and how each solution runs.
// `pnpm pipeline eval model` flags override the keys they name.
import { z } from "zod";

export const BENCHMARK_NAMES = ["humaneval", "humaneval+", "mbpp", "mbpp+"] as const;
export type BenchmarkName = (typeof BENCHMARK_NAMES)[number];

export const FEEDBACK_KINDS = ["execution", "human", "oracle"] as const;
export type FeedbackKind = (typeof FEEDBACK_KINDS)[number];

export const benchmarkSourceSchema = z
  .object({
    /** dataset id on the hub */
    repo: z.string().regex(/^[\w.-]+\/[\w.-]+$/, "expected a dataset id like owner/name"),
    /** branch, tag or commit id; the commit it resolves to is written to run.json and metrics.json */
    revision: z.string().min(1),
    /** paths or globs of the test split's files */
    files: z.array(z.string().min(1)).min(1),
  })
  .strict();
export type BenchmarkSource = z.infer<typeof benchmarkSourceSchema>;

// Sources (docs/eval.md, "Where the benchmarks come from"): humaneval and mbpp are the repos and files
// stages/dedup.ts already fetches for decontamination; the commits of the EvalPlus sets are the ones
// whose listings show the test parquet files (hub API and tree pages of both datasets).
export const DEFAULT_BENCHMARK_SOURCES: Record<BenchmarkName, BenchmarkSource> = {
  humaneval: {
    repo: "openai/openai_humaneval",
    revision: "main",
    files: ["openai_humaneval/test-*.parquet"],
  },
  "humaneval+": {
    repo: "evalplus/humanevalplus",
    revision: "d32357cf319e50e9c8d8dab5ea876c72b0fd321b",
    files: ["data/test-*.parquet"],
  },
  mbpp: {
    repo: "google-research-datasets/mbpp",
    revision: "4bb6404fdc6cacfda99d4ac4205087b89d32030c",
    files: ["full/test-*.parquet"],
  },
  "mbpp+": {
    repo: "evalplus/mbppplus",
    revision: "9a36f31e81d5e1670b68e6de8ef23da0c4e1abb5",
    files: ["data/test-*.parquet"],
  },
};

function sourceOf(name: BenchmarkName) {
  return benchmarkSourceSchema
    .partial()
    .transform((given): BenchmarkSource => ({ ...DEFAULT_BENCHMARK_SOURCES[name], ...given }))
    .default(DEFAULT_BENCHMARK_SOURCES[name]);
}

export const evalModelConfigSchema = z
  .object({
    /** the LLM role (llm.<role>) whose endpoint serves the model under evaluation */
    role: z.string().min(1).default("weak"),
    /** the LLM role that writes human-like guidance (`human` and `oracle` feedback); the paper: GPT-4 */
    feedback_role: z.string().min(1).default("strong"),
    /** attempts per task: the first answer and up to rounds-1 answers to feedback (the paper: 2) */
    rounds: z.number().int().min(1).max(10).default(2),
    feedback: z.enum(FEEDBACK_KINDS).default("execution"),
    /** tasks evaluated at once */
    workers: z.number().int().positive().max(256).default(4),
    /** seconds one solution may run against all of a task's tests (a "+" task has hundreds) */
    run_timeout_s: z.number().positive().default(20),
    /** MiB per run; default: the sandbox's */
    memory_mb: z.number().int().min(16).optional(),
    /**
     * How the seed's typographic fence (“‘, a triple backtick after the web page's smart quotes)
     * reaches the model: `backticks` sends ```, `verbatim` sends the characters as the seed has them.
     */
    fence: z.enum(["backticks", "verbatim"]).default("backticks"),
    /** each benchmark's hub source; a key left out keeps its default (e.g. set only `revision`) */
    benchmarks: z
      .object({
        humaneval: sourceOf("humaneval"),
        "humaneval+": sourceOf("humaneval+"),
        mbpp: sourceOf("mbpp"),
        "mbpp+": sourceOf("mbpp+"),
      })
      .strict()
      .default(DEFAULT_BENCHMARK_SOURCES),
  })
  .strict();

export type EvalModelConfig = z.infer<typeof evalModelConfigSchema>;
