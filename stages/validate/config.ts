// `stages.validate`: what drops a dialogue, and how hard the sandbox is pushed. Every key has a default.
import { z } from "zod";

/** What one code block came to. */
export const BLOCK_OUTCOMES = ["passed", "failed", "timeout", "not-runnable"] as const;
export type BlockOutcome = (typeof BLOCK_OUTCOMES)[number];

/** What a dialogue's final code came to; `no-code` when no assistant message has a code block. */
export const DIALOGUE_OUTCOMES = [...BLOCK_OUTCOMES, "no-code"] as const;
export type DialogueOutcome = (typeof DIALOGUE_OUTCOMES)[number];

/** Why a block was not run, or why its failure says nothing about the code itself. */
export const NOT_RUNNABLE_REASONS = [
  "missing-package",
  "needs-network",
  "needs-gui",
  "needs-input",
  "sql-without-schema",
  "fragment",
  "language-unavailable",
  "not-code",
] as const;
export type NotRunnableReason = (typeof NOT_RUNNABLE_REASONS)[number];

export const validateConfigSchema = z
  .object({
    /** outcomes of a dialogue's final code that drop it (a reject naming the outcome and the error) */
    drop: z.array(z.enum(DIALOGUE_OUTCOMES)).default(["failed", "timeout"]),
    /** dialogues validated at once */
    concurrency: z.number().int().positive().max(1024).default(16),
    /** code blocks in the sandbox at once, across all dialogues; default: `sandbox.workers` (or the cores) */
    sandbox_concurrency: z.number().int().positive().max(1024).optional(),
    /** seconds a block may run */
    run_timeout_s: z.number().positive().default(10),
    /** seconds a block may take to compile */
    compile_timeout_s: z.number().positive().default(30),
    /** MiB per run; default: the sandbox's own default */
    memory_mb: z.number().int().min(64).optional(),
    /**
     * tries of one block while the sandbox itself fails (an outage, not the code); after the last one
     * the dialogue fails and the next run retries it
     */
    sandbox_attempts: z.number().int().min(1).max(10).default(3),
  })
  .strict();
export type ValidateConfig = z.infer<typeof validateConfigSchema>;
