// `stages.validate`: what drops a dialogue, and how hard the sandbox is pushed. Every key has a default.
import { z } from "zod";
import { sandboxSettingsShape } from "../../pipeline/execution/settings.js";
import { operational } from "../../pipeline/hash.js";

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

/** The quality gates (stages/validate/gates.ts), each a tag and, when listed in `gates.drop`, a drop. */
export const GATE_RULES = [
  /** a block that fails, and the next turn is not its execution result */
  "silent-failure",
  /** an answer states output its code does not print */
  "stated-output",
  /** the last request asks for code and no answer after it has any */
  "no-code-answer",
  /** code in another language than the query names */
  "wrong-language",
  /** an empty answer, one cut by max_tokens, or one whose code fence never closes */
  "truncated",
  /** an execution-result turn longer than `gates.max_result_chars` */
  "long-result",
  /** the same answer twice in one dialogue */
  "repeated-turn",
  /** code the sandbox had to stop or deny: network, writes outside its work dir, process or memory limit */
  "sandbox-stopped",
] as const;
export type GateRule = (typeof GATE_RULES)[number];

export const gatesConfigSchema = z
  .object({
    /** rules whose tag drops the dialogue (a reject named after the rule); the others only tag */
    drop: z.array(z.enum(GATE_RULES)).default([...GATE_RULES]),
    /** characters an execution-result turn may have before `long-result` tags it */
    max_result_chars: z.number().int().positive().default(4000),
  })
  .strict();
export type GatesConfig = z.infer<typeof gatesConfigSchema>;

export const validateConfigSchema = z
  .object({
    /** outcomes of a dialogue's final code that drop it (a reject naming the outcome and the error) */
    drop: z.array(z.enum(DIALOGUE_OUTCOMES)).default(["failed", "timeout"]),
    /** the quality gates: which rules drop, and their limits */
    gates: gatesConfigSchema.prefault({}),
    /** dialogues validated at once */
    concurrency: operational(z.number().int().positive().max(1024).default(16)),
    /**
     * code blocks in the sandbox at once, across all dialogues; default: `sandbox.workers` (or the
     * cores; with `sandbox.url`, twice the servers' workers)
     */
    sandbox_concurrency: operational(z.number().int().positive().max(1024).optional()),
    /**
     * limits of one block, and its tries while the sandbox itself fails (an outage, not the code);
     * after the last one the dialogue fails and the next run retries it (pipeline/execution)
     */
    ...sandboxSettingsShape,
  })
  .strict();
export type ValidateConfig = z.infer<typeof validateConfigSchema>;
