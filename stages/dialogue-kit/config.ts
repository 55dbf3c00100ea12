// Config pieces simulate and correct share: which records, how code runs, how a run is shown.
import { z } from "zod";
import { DEFAULT_FEEDBACK_TEMPLATE, sandboxSettingsShape } from "../../pipeline/execution/index.js";
import { operational } from "../../pipeline/hash.js";

export const selectionShape = {
  /** `runnable`: every language the sandbox runs; or a list, e.g. [python, javascript, cpp] */
  languages: z.union([z.literal("runnable"), z.array(z.string().min(1)).min(1)]).default("runnable"),
  /** a seeded sample of this many records; unset: every record of those languages */
  count: z.number().int().positive().optional(),
  seed: z.number().int().default(0),
};
export type Selection = z.infer<z.ZodObject<typeof selectionShape>>;

export const executionSchema = z
  .object({
    /** limits of one run and tries before a sandbox error fails the record (pipeline/execution) */
    ...sandboxSettingsShape,
    /** programs running at once; default: `sandbox.workers` (the cores; with `url`, twice the servers' workers) */
    concurrency: operational(z.number().int().positive().optional()),
    /** Python blocks of one dialogue share a session, as in the paper's interpreter */
    notebook: z.boolean().default(true),
  })
  .strict();
export type ExecutionConfig = z.infer<typeof executionSchema>;

/** The "Execution result:" turn (pipeline/execution's template), every text replaceable. */
export const feedbackTemplateSchema = z
  .object({
    turn: z.string().includes("{result}").default(DEFAULT_FEEDBACK_TEMPLATE.turn),
    no_output: z.string().min(1).default(DEFAULT_FEEDBACK_TEMPLATE.no_output),
    timeout: z.string().min(1).default(DEFAULT_FEEDBACK_TEMPLATE.timeout),
    wrong_output: z.string().min(1).default(DEFAULT_FEEDBACK_TEMPLATE.wrong_output),
    wrong_output_no_input: z.string().min(1).default(DEFAULT_FEEDBACK_TEMPLATE.wrong_output_no_input),
    max_chars: z.number().int().min(100).default(DEFAULT_FEEDBACK_TEMPLATE.max_chars),
    head_share: z.number().min(0).max(1).default(DEFAULT_FEEDBACK_TEMPLATE.head_share),
  })
  .strict();

/** The keys after a stage's own that dialogueStage() reads (DialogueStageConfig): spread last. */
export const dialogueRunShape = {
  execution: executionSchema.prefault({}),
  /** the "Execution result:" turn */
  feedback_template: feedbackTemplateSchema.prefault({}),
  /** records in flight; default: twice the lead role's concurrency plus the programs at once */
  concurrency: operational(z.number().int().positive().optional()),
};

/** What dialogueStage() reads of a dialogue stage's config. */
export type DialogueStageConfig = z.infer<z.ZodObject<typeof selectionShape & typeof dialogueRunShape>>;
