// Validation: "every code block is executed in the sandbox" before release. Each dialogue of the
// dialogue stages runs block by block (validate/validate-dialogue.ts); blocks and dialogue are tagged
// passed, failed, timed out or not runnable in `meta.validation`. A dialogue whose final code fails or
// times out is dropped by default; one whose code cannot run here is kept with its tag. A sandbox
// outage is no verdict on the code: the dialogue fails and the next run retries it.
import { getMaxListeners, setMaxListeners } from "node:events";
import pLimit from "p-limit";
import { parseDialogue } from "../pipeline/dialogue.js";
import { SandboxOutageError } from "../pipeline/execution/errors.js";
import { executeBlock, learnServerWorkers, programsAtOnce } from "../pipeline/execution/index.js";
import type { PipelineRecord, RecordOutcome } from "../pipeline/record.js";
import { defineStage, type RecordStage, type StageContext } from "../pipeline/stage.js";
import { type ValidateConfig, validateConfigSchema } from "./validate/config.js";
import { type BlockRun, checkGates } from "./validate/gates.js";
import { validateReport } from "./validate/report.js";
import {
  describeValidation,
  summarizeValidation,
  type ValidateSummary,
  validateSummarySchema,
} from "./validate/summary.js";
import { type RunProgram, validateDialogue } from "./validate/validate-dialogue.js";

type ValidateContext = StageContext<ValidateConfig>;

/**
 * What one run of validate shares: its programs go through one sandbox gate for every dialogue in
 * flight (the dialogues' concurrency decides how many sessions are open, the gate how many programs run).
 */
export async function openValidate(ctx: ValidateContext): Promise<RunProgram> {
  // with sandbox.url and no workers, the servers say theirs first
  if (ctx.config.sandbox_concurrency === undefined) await learnServerWorkers(ctx.root.sandbox, ctx.log);
  const gate = pLimit(programsAtOnce(ctx.config.sandbox_concurrency, ctx.root));
  // every run in flight listens on the run's signal; many at once are expected, not a leak
  setMaxListeners(
    Math.max(getMaxListeners(ctx.signal), ctx.config.concurrency + gate.concurrency + 10),
    ctx.signal,
  );
  return (code, language, previous) =>
    executeBlock(ctx.services.sandbox(), code, language, ctx.config, { previous, gate, signal: ctx.signal });
}

export async function validateRecord(
  record: PipelineRecord,
  ctx: ValidateContext,
  run: RunProgram,
): Promise<RecordOutcome> {
  const parsed = parseDialogue(record, ctx.registry.methods);
  if (!parsed.ok) {
    return { rejects: [{ id: record.id, reason: "malformed-dialogue", detail: parsed.error, record }] };
  }
  const dialogue = parsed.dialogue;
  let validation: Awaited<ReturnType<typeof validateDialogue>>;
  const runs: BlockRun[] = [];
  try {
    validation = await validateDialogue(dialogue, run, (block, result) =>
      runs.push({ block, stdout: result.stdout }),
    );
  } catch (error) {
    if (error instanceof SandboxOutageError)
      return { failed: { reason: "sandbox-error", detail: error.message } };
    if (ctx.signal.aborted)
      return { failed: { reason: "interrupted", detail: "stopped before the dialogue's blocks had run" } };
    throw error;
  }
  const gates = checkGates(dialogue, runs, ctx.config.gates);
  const tagged = { ...dialogue, meta: { ...dialogue.meta, validation: { ...validation, gates } } };
  const drop = (reason: string, detail: string): RecordOutcome => ({
    rejects: [{ id: dialogue.id, reason, detail, record: tagged }],
  });
  if (!ctx.config.drop.includes(validation.outcome)) {
    // a dialogue whose final code may stay is still dropped by the first gate listed to drop
    const gate = gates.find((g) => ctx.config.gates.drop.includes(g.rule));
    return gate ? drop(gate.rule, `message ${gate.message}: ${gate.detail}`) : { out: [tagged] };
  }
  const where = validation.final_message === undefined ? "" : ` (message ${validation.final_message})`;
  return drop(`final-code-${validation.outcome}`, `the final code${where} ${describeOutcome(validation)}`);
}

function describeOutcome(v: { outcome: string; error?: string; reason?: string }): string {
  switch (v.outcome) {
    case "failed":
      return `failed: ${v.error ?? "unknown error"}`;
    case "timeout":
      return "timed out";
    case "not-runnable":
      return `could not run (${v.reason}): ${v.error ?? ""}`;
    default:
      return "has no code block";
  }
}

/** Validate over the given dialogue stages (stages/index.ts passes those that declare `methods`). */
export function defineValidateStage(
  upstream: readonly string[],
): RecordStage<ValidateConfig, unknown, ValidateSummary> {
  return defineStage<ValidateConfig, RunProgram, ValidateSummary>({
    name: "validate",
    description:
      "runs every assistant code block of every dialogue in the sandbox; drops dialogues whose final code fails",
    upstream,
    kind: "record",
    configSchema: validateConfigSchema,
    concurrency: (ctx) => ctx.config.concurrency,
    // the dialogue stages one after the other, each in its stored order: the same on every call
    async *input(ctx) {
      for (const stage of upstream) yield* ctx.read(stage);
    },
    inputSize: async (ctx) => upstream.reduce((total, stage) => total + (ctx.countOf(stage) ?? 0), 0),
    open: openValidate,
    process: validateRecord,
    async summarize(ctx) {
      const summary = await summarizeValidation(
        ctx.registry.methods,
        ctx.read(ctx.name),
        ctx.read(ctx.name, { rejects: true }),
      );
      for (const line of describeValidation(summary)) ctx.log.info(line);
      return summary;
    },
    summarySchema: validateSummarySchema,
    report: validateReport,
  }) as RecordStage<ValidateConfig, unknown, ValidateSummary>;
}
