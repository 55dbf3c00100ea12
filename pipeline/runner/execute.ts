// One run of one stage (or one shard of it) whose lock the caller holds. A record-wise
// stage streams its input, skips what an earlier run committed, keeps `concurrency` records in flight
// and commits each outcome in one append; a global stage writes to a staging part committed when it
// finishes. The manifest is saved at every checkpoint, so a kill -9 resumes where it stopped, and the
// run's end (complete, interrupted, records failed, each with its advice) before it returns or throws.
import { createHash } from "node:crypto";
import { hostname } from "node:os";
import { clause, diskFull, InterruptedError, UserError } from "../errors.js";
import type { LlmBatches } from "../llm/batch/rounds.js";
import type { PipelineRecord, RecordOutcome, Reject } from "../record.js";
import type { CostEstimate, GlobalStage, RecordStage, Stage, StageContext } from "../stage.js";
import type { Manifest, StageCounts } from "../store/manifest.js";
import { OutputDigest, type StageStore } from "../store/stage-store.js";
import { Tally } from "../store/tally.js";
import { describeEndpoints, describeSandbox, UsageMeter } from "../usage.js";
import { createProgress, formatDuration, type Progress } from "./progress.js";
import type { RunnerRead } from "./read.js";
import { type ShardSpec, shardTest } from "./shard.js";
import { outputHashOf, upstreamContentOf } from "./status.js";

/** What running (or estimating) a stage came to. */
export interface StageOutcome {
  stage: string;
  action: "skipped" | "ran" | "estimated";
  counts?: Manifest["counts"];
  stats?: Record<string, unknown>;
  estimate?: CostEstimate;
  elapsedMs?: number;
}

/** Runs one stage whose lock the caller holds. */
export async function runStage(
  r: RunnerRead,
  stage: Stage<unknown>,
  /** what an earlier run of it saved, to resume */
  previous: Manifest | undefined,
  signal: AbortSignal,
  forced: boolean,
  shard?: ShardSpec,
): Promise<StageOutcome> {
  const store = r.store(stage.name, shard);
  const label = store.label;
  // LLM usage and sandbox programs go on from the previous run's checkpoint (approximate after a kill)
  const usage = new UsageMeter(previous?.usage, previous?.sandbox);
  const started = Date.now();
  const now = new Date().toISOString();
  const manifest: Manifest = {
    version: 1,
    stage: stage.name,
    state: "running",
    configHash: r.configHash(stage),
    ...settingsField(r.configSettings(stage)),
    upstream: Object.fromEntries(stage.upstream.map((u) => [u, outputHashOf(r.status(u))])),
    ...upstreamContentOf(stage.upstream.map((u) => r.status(u))),
    counts: previous?.counts ?? { in: 0, out: 0, rejected: 0, failed: 0 },
    usage: usage.totals,
    runs: (previous?.runs ?? 0) + 1,
    pid: process.pid,
    host: hostname(),
    ...(shard ? { shard: { index: shard.index, count: shard.count }, invocation: r.invocation() } : {}),
    ...(previous?.sandbox ? { sandbox: previous.sandbox } : {}),
    startedAt: previous?.startedAt ?? now,
    updatedAt: now,
    elapsedMs: previous?.elapsedMs ?? 0,
    ...(previous?.inputCheck ? { inputCheck: previous.inputCheck } : {}),
  };
  store.saveManifest(manifest);
  const tally = new Tally();
  const ctx = r.context(stage, signal, usage, shard, tally);
  const elapsed = () => manifest.elapsedMs + (Date.now() - started);
  let counts = manifest.counts;
  // the manifest as it stands now: what this run has counted and spent so far
  const current = (): Manifest => ({
    ...manifest,
    counts,
    usage: usage.totals,
    ...(usage.programs ? { sandbox: usage.programs } : {}),
    elapsedMs: elapsed(),
  });
  const partial = (lastError?: string) =>
    store.saveManifest({
      ...current(),
      state: "partial",
      pid: undefined,
      ...(lastError ? { lastError } : {}),
    });
  const again = forced ? "Run the same command again without --force" : "Run the same command again";
  let result: ExecutionResult;
  let state: unknown;
  let opened = false;
  // the LLM roles in batch mode: what earlier runs of this stage sent is collected first
  const batches = r.options.services.llmBatches?.();
  try {
    await batches?.begin(store.dir, label);
    state = await stage.open?.(ctx);
    opened = true;
    const progress = createProgress(label, {
      // the upstream's output count, where that is the input
      total: !shard && stage.kind === "record" && !stage.input ? ctx.countOf(stage.upstream[0]!) : undefined,
      ...(r.options.progressStream ? { stream: r.options.progressStream } : {}),
    });
    // the total is set once the stage has counted its input, without holding up its first records (a
    // dialogue stage with no sample to choose counts its languages in the filter's index, which an
    // upgraded data dir makes on first use); whatever fails the count fails the input's own read too,
    // so its error is left to that read
    if (stage.kind === "record" && stage.inputSize && !shard) {
      stage.inputSize(ctx).then(
        (total) => progress.setTotal(total),
        () => {},
      );
    }
    const hooks = {
      progress,
      tally,
      checkpoint: (now: Manifest["counts"], input?: InputCheck) => {
        counts = now;
        if (input) manifest.inputCheck = input;
        store.saveManifest(current());
      },
      ...(previous?.inputCheck ? { previousInput: previous.inputCheck } : {}),
      ...(batches ? { batches } : {}),
      ...(shard
        ? {
            keep: shardTest(shard),
            forceCommand: `${r.shardCommand(stage.name, shard)} --force`,
          }
        : {}),
    };
    result =
      stage.kind === "record"
        ? await executeRecordStage(stage, ctx, state, store, hooks)
        : await executeGlobalStage(stage, ctx, state, store, hooks);
    counts = result.counts;
    if (!result.interrupted && result.counts.failed === 0) {
      result.stats ??= await stage.summarize?.(ctx, state, tally);
    }
  } catch (error) {
    // on a full disk the manifest may not save either: the full disk is what to report
    try {
      partial((error as Error)?.message ?? String(error));
    } catch (saving) {
      if (!diskFull(error)) throw saving;
    }
    throw error;
  } finally {
    batches?.end();
    if (opened) await stage.close?.(state, ctx);
  }
  if (result.interrupted) {
    partial();
    throw new InterruptedError(
      `interrupted: ${label} saved ${result.counts.in} records so far. ${again} to resume where it stopped.`,
    );
  }
  if (result.counts.failed > 0) {
    const reasons = [...result.failures]
      .map(([reason, f]) => `${f.count} x ${reason}${f.example ? ` (e.g. ${clause(f.example)})` : ""}`)
      .join("; ");
    partial(`${result.counts.failed} records failed: ${reasons}`);
    throw new UserError(
      `${label}: ${result.counts.failed} records failed: ${reasons}. The other ${result.counts.in} are saved; ` +
        `${again.charAt(0).toLowerCase()}${again.slice(1)} to retry the failed ones.`,
      { exitCode: 1 },
    );
  }
  const complete: Manifest = {
    ...current(),
    state: "complete",
    pid: undefined,
    outputHash: result.outputHash,
    rejectsHash: result.rejectsHash,
    finishedAt: new Date().toISOString(),
    ...(result.stats ? { stats: result.stats } : {}),
    ...tally.saved(),
  };
  store.saveManifest(complete);
  r.log.info(
    `${label}: complete: ${result.counts.in} in, ${result.counts.out} out, ${result.counts.rejected} rejected (${formatDuration(Date.now() - started)})`,
  );
  if (complete.sandbox) r.log.info(`${label}: sandbox: ${describeSandbox(complete.sandbox)}`);
  for (const line of describeEndpoints(usage.totals, complete.sandbox)) r.log.info(`${label}: ${line}`);
  return {
    stage: stage.name,
    action: "ran",
    counts: result.counts,
    stats: complete.stats,
    elapsedMs: Date.now() - started,
  };
}

interface ExecutionResult {
  counts: StageCounts;
  outputHash: string;
  rejectsHash: string;
  /** failure reason -> inputs that failed with it in this run (retried on the next run), with one detail */
  failures: Map<string, { count: number; example?: string }>;
  interrupted: boolean;
  /** what a global stage's `run` returned: its statistics */
  stats?: Record<string, unknown>;
}

/** A digest of the ids of the first `position + 1` input records. */
type InputCheck = NonNullable<Manifest["inputCheck"]>;

interface ExecutionHooks {
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
  /** LLM roles in batch mode: a round goes out once every record in flight waits on one */
  batches?: LlmBatches;
}

async function executeRecordStage<C, S>(
  stage: RecordStage<C, S>,
  ctx: StageContext<C>,
  state: S,
  store: StageStore,
  hooks: ExecutionHooks,
): Promise<ExecutionResult> {
  const scan = await store.scan();
  const counts: StageCounts = { ...scan.counts, failed: 0 };
  const failures: ExecutionResult["failures"] = new Map();
  const { digest, rejectsDigest } = scan;
  hooks.tally.addTally(scan.tally);
  const writer = store.newPart();
  const concurrency = Math.max(1, stage.concurrency?.(ctx) ?? 1);
  const inflight = new Set<Promise<void>>();
  // one waiter (the input loop) and one wake-up per finished record: no callbacks pile up on a slow one
  let wake: (() => void) | undefined;
  const slotFreed = () => new Promise<void>((resolve) => (wake = resolve));
  // batch mode: every record that will wait on the same step is admitted, so they share one batch
  const batches = hooks.batches;
  const admit = () => (batches?.engaged ? Math.max(concurrency, batches.admit) : concurrency);
  let feeding = true;
  batches?.watch({ busy: () => inflight.size, feeding: () => feeding, wake: () => wake?.() });
  let fatal: unknown;
  // resume skips by position, so it is only right if the input comes in the same order as before
  const inputDigest = createHash("sha1");
  let position = -1;
  // until this run has passed the earlier run's checkpoint, the earlier fingerprint stays the one on record
  let verified = hooks.previousInput === undefined;
  const inputCheck = (): InputCheck | undefined =>
    verified && position >= 0 ? { position, digest: inputDigest.copy().digest("hex") } : undefined;
  const timer = setInterval(() => {
    // a checkpoint that cannot be written (a full or read-only disk) stops the stage like a record's error
    try {
      hooks.checkpoint(counts, inputCheck());
    } catch (error) {
      fatal ??= error;
      wake?.();
    }
  }, 2000);

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
        // a full disk (the LLM cache's, say) is no verdict on the record
        if (error instanceof UserError || diskFull(error)) throw error;
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
        for (const reject of rejects) rejectsDigest.add(reject);
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
      if (inflight.size >= admit()) {
        feeding = false;
        batches?.poke();
        while (inflight.size >= admit() && !fatal) await slotFreed();
        feeding = true;
      }
      if (ctx.signal.aborted || fatal) break;
      const task: Promise<void> = handle(position, record, hooks.keep ? global : undefined).finally(() => {
        inflight.delete(task);
        wake?.();
        batches?.poke();
      });
      inflight.add(task);
    }
    feeding = false;
    batches?.poke();
    await Promise.all(inflight);
  } finally {
    await Promise.allSettled(inflight);
    clearInterval(timer);
    writer.close();
    hooks.progress.done();
    hooks.checkpoint(counts, inputCheck());
  }
  if (fatal) throw fatal;
  return {
    counts,
    outputHash: digest.value,
    rejectsHash: rejectsDigest.value,
    failures,
    interrupted: ctx.signal.aborted,
  };
}

async function executeGlobalStage<C, S>(
  stage: GlobalStage<C, S>,
  ctx: StageContext<C>,
  state: S,
  store: StageStore,
  hooks: ExecutionHooks,
): Promise<ExecutionResult> {
  const counts: StageCounts = { in: 0, out: 0, rejected: 0, failed: 0 };
  const digest = new OutputDigest();
  const rejectsDigest = new OutputDigest();
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
      rejectsDigest.add(reject);
      counts.rejected++;
      hooks.tally.addEntry({ r: [reject] });
    },
  };
  let stats: Record<string, unknown> | undefined;
  try {
    stats = (await stage.run(ctx, emit, state)) ?? undefined;
  } catch (error) {
    if (!ctx.signal.aborted || error instanceof UserError) {
      staging.writer.close();
      throw error;
    }
  } finally {
    hooks.progress.done();
  }
  // a stage that returns (or fails) early on abort has not seen all of its input: its outputs must not count
  const interrupted = ctx.signal.aborted;
  if (interrupted) staging.writer.close();
  else {
    staging.commit();
    for (const upstream of stage.upstream) counts.in += ctx.countOf(upstream) ?? 0;
  }
  return {
    counts,
    outputHash: digest.value,
    rejectsHash: rejectsDigest.value,
    failures: new Map(),
    interrupted,
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

const settingsField = (settings: Record<string, string> | undefined) =>
  settings ? { configSettings: settings } : {};
