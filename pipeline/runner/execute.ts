// Runs one stage once its plan says so. Record-wise stages stream their input, skip what an earlier
// run committed, keep `concurrency` records in flight, and commit each outcome in one append. Global
// stages write to a staging part that is committed only when they finish.
import { createHash } from "node:crypto";
import { UserError } from "../errors.js";
import type { PipelineRecord, RecordOutcome, Reject } from "../record.js";
import type { GlobalStage, RecordStage, StageContext } from "../stage.js";
import type { OutputDigest, StageStore, Tally } from "../store/index.js";
import type { StageCounts } from "../store/manifest.js";
import type { Progress } from "./progress.js";

export interface ExecutionResult {
  counts: StageCounts;
  outputHash: string;
  /** failure reason -> inputs that failed with it in this run (retried on the next run), with one detail */
  failures: Map<string, FailureSummary>;
  interrupted: boolean;
  /** what a global stage's `run` returned: its statistics */
  stats?: Record<string, unknown>;
}

export interface FailureSummary {
  count: number;
  example?: string;
}

/** A digest of the ids of the first `position + 1` input records. */
export interface InputCheck {
  position: number;
  digest: string;
}

export interface ExecutionHooks {
  progress: Progress;
  /** called every few seconds and at the end with the running counts */
  checkpoint(counts: StageCounts, input?: InputCheck): void;
  /** the previous run's fingerprint of its input, to refuse resuming over an input that changed */
  previousInput?: InputCheck;
  /** a shard's test: the input records it does not keep are not its own (positions count only its own) */
  keep?(record: PipelineRecord): boolean;
  /** the command that recomputes this stage (or shard) from scratch, for advice */
  forceCommand?: string;
  /** the run's counters and reject reasons (`ctx.stat` outside a record adds to it too) */
  tally: Tally;
}

export async function executeRecordStage<C, S>(
  stage: RecordStage<C, S>,
  ctx: StageContext<C>,
  state: S,
  store: StageStore,
  hooks: ExecutionHooks,
): Promise<ExecutionResult> {
  const scan = await store.scan();
  const counts: StageCounts = { ...scan.counts, failed: 0 };
  const failures = new Map<string, FailureSummary>();
  const digest = scan.digest;
  hooks.tally.addTally(scan.tally);
  const writer = store.newPart();
  const concurrency = Math.max(1, stage.concurrency?.(ctx) ?? 1);
  const inflight = new Set<Promise<void>>();
  // one waiter (the input loop) and one wake-up per finished record: no callbacks pile up on a slow one
  let wake: (() => void) | undefined;
  const slotFreed = () => new Promise<void>((resolve) => (wake = resolve));
  let fatal: unknown;
  // resume skips by position, so it is only right if the input comes in the same order as before
  const inputDigest = createHash("sha1");
  let position = -1;
  // until this run has passed the earlier run's checkpoint, the earlier fingerprint stays the one on record
  let verified = hooks.previousInput === undefined;
  const inputCheck = (): InputCheck | undefined =>
    verified && position >= 0 ? { position, digest: inputDigest.copy().digest("hex") } : undefined;
  const timer = setInterval(() => hooks.checkpoint(counts, inputCheck()), 2000);

  // never rejects: an error here is either the stage's verdict on the record or fatal for the run
  const handle = async (position: number, record: PipelineRecord, global?: number): Promise<void> => {
    const at = global === undefined ? { s: position } : { s: position, g: global };
    try {
      let outcome: RecordOutcome;
      // a record's counters are committed with its outcome: a failed or lost one counts nothing, and
      // a redone one counts only what the run that commits it did
      let stats: Record<string, number> | undefined;
      const recordCtx: StageContext<C> = {
        ...ctx,
        stat: (name, value = 1) => {
          stats ??= {};
          stats[name] = (stats[name] ?? 0) + value;
        },
      };
      try {
        outcome = await stage.process(record, recordCtx, state);
      } catch (error) {
        if (error instanceof UserError) throw error;
        outcome = { failed: { reason: "error", detail: (error as Error)?.message ?? String(error) } };
      }
      if (outcome.failed) {
        writer.append({ ...at, f: outcome.failed });
        counts.failed++;
        const summary = failures.get(outcome.failed.reason) ?? { count: 0 };
        summary.count++;
        summary.example ??= outcome.failed.detail;
        failures.set(outcome.failed.reason, summary);
      } else {
        const out = outcome.out ?? [];
        checkIds(stage.name, out, record);
        const rejects = outcome.rejects ?? [];
        writer.append(
          {
            ...at,
            ...(out.length ? { o: out } : {}),
            ...(rejects.length ? { r: rejects } : {}),
            ...(stats ? { t: stats } : {}),
          },
          digest.addJson,
        );
        hooks.tally.addEntry({ r: rejects, ...(stats ? { t: stats } : {}) });
        counts.in++;
        counts.out += out.length;
        counts.rejected += rejects.length;
      }
      hooks.progress.tick();
    } catch (error) {
      fatal ??= error;
    }
  };

  try {
    const input = stage.input ? stage.input(ctx, state) : ctx.read(stage.upstream[0]!);
    const previous = hooks.previousInput;
    let global = -1;
    for await (const record of input) {
      global++;
      if (hooks.keep && !hooks.keep(record)) continue;
      position++;
      inputDigest.update(`${record.id}\n`);
      if (previous && position === previous.position) {
        verified = inputDigest.copy().digest("hex") === previous.digest;
        if (!verified) {
          throw new UserError(
            `the input of ${stage.name} is not what an earlier run of it saw (records up to #${position} differ), ` +
              `so its saved progress cannot be resumed. Run \`${hooks.forceCommand ?? `pnpm pipeline run ${stage.name} --force`}\` to recompute it.`,
          );
        }
      }
      if (scan.done.has(position)) {
        hooks.progress.skip();
        continue;
      }
      while (inflight.size >= concurrency && !fatal) await slotFreed();
      if (ctx.signal.aborted || fatal) break;
      const task: Promise<void> = handle(position, record, hooks.keep ? global : undefined).finally(() => {
        inflight.delete(task);
        wake?.();
      });
      inflight.add(task);
    }
    await Promise.all(inflight);
  } finally {
    await Promise.allSettled(inflight);
    clearInterval(timer);
    writer.close();
    hooks.progress.done();
    hooks.checkpoint(counts, inputCheck());
  }
  if (fatal) throw fatal;
  return { counts, outputHash: digest.value, failures, interrupted: ctx.signal.aborted };
}

export async function executeGlobalStage<C, S>(
  stage: GlobalStage<C, S>,
  ctx: StageContext<C>,
  state: S,
  store: StageStore,
  hooks: ExecutionHooks,
  digest: OutputDigest,
): Promise<ExecutionResult> {
  const counts: StageCounts = { in: 0, out: 0, rejected: 0, failed: 0 };
  const staging = store.stagingPart();
  const emit = {
    out: async (record: PipelineRecord) => {
      checkIds(stage.name, [record]);
      staging.writer.append({ s: -1, o: [record] }, digest.addJson);
      counts.out++;
      hooks.progress.tick();
    },
    reject: async (reject: Reject) => {
      staging.writer.append({ s: -1, r: [reject] });
      counts.rejected++;
      hooks.tally.addEntry({ r: [reject] });
    },
  };
  let stats: Record<string, unknown> | undefined;
  try {
    stats = (await stage.run(ctx, emit, state)) ?? undefined;
    // a stage that returns early on abort has not seen all of its input: its outputs must not count
    if (ctx.signal.aborted) {
      staging.writer.close();
      hooks.progress.done();
      return { counts, outputHash: digest.value, failures: new Map(), interrupted: true };
    }
  } catch (error) {
    staging.writer.close();
    hooks.progress.done();
    if (ctx.signal.aborted && !(error instanceof UserError)) {
      return { counts, outputHash: digest.value, failures: new Map(), interrupted: true };
    }
    throw error;
  }
  staging.commit();
  hooks.progress.done();
  for (const upstream of stage.upstream) counts.in += ctx.countOf(upstream) ?? 0;
  return {
    counts,
    outputHash: digest.value,
    failures: new Map(),
    interrupted: false,
    ...(stats ? { stats } : {}),
  };
}

function checkIds(stage: string, records: PipelineRecord[], input?: PipelineRecord): void {
  for (const record of records) {
    if (typeof record?.id !== "string" || record.id.length === 0) {
      throw new Error(
        `stage ${stage} emitted a record without a string id${input ? ` for input ${input.id}` : ""}: every record needs a stable id`,
      );
    }
  }
}
