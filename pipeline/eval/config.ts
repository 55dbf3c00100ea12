// The `eval:` section of the YAML config: which pass@k to report and how evaluation runs go to the
// sandbox. Command-line flags of `pnpm pipeline eval` override each key.
import { z } from "zod";
import { evalModelConfigSchema } from "./model/config.js";

export const evalConfigSchema = z
  .object({
    /** pass@k is reported for each k (questions with fewer than k predictions are left out of that mean) */
    ks: z
      .array(z.number().int().positive())
      .min(1)
      .default([1, 10, 100])
      .transform((ks) => [...new Set(ks)].sort((a, b) => a - b)),
    /** predictions in flight at once; default: the sandbox's workers, else the number of cores */
    workers: z.number().int().positive().optional(),
    /** seconds per compile step; default: the sandbox's */
    compile_timeout_s: z.number().positive().optional(),
    /** seconds per run step; default: the sandbox's */
    run_timeout_s: z.number().positive().optional(),
    /** MiB per run; default: the sandbox's */
    memory_mb: z.number().int().min(16).optional(),
    /** `eval model`: the paper's HumanEval(+)/MBPP(+) evaluation of a model (pipeline/eval/model) */
    model: evalModelConfigSchema.default(evalModelConfigSchema.parse({})),
  })
  .strict();

export type EvalConfig = z.infer<typeof evalConfigSchema>;
