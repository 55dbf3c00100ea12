// One run of one stage (or one shard of it) whose lock the caller holds: its manifest kept up to date
// at every checkpoint so a kill -9 resumes where it stopped, and its end (complete, interrupted, or
// records failed, each with the advice that goes with it) written before it returns or throws.
import { hostname } from "node:os";
import { clause, InterruptedError, UserError } from "../errors.js";
import type { Stage, StageContext } from "../stage.js";
import { type Manifest, OutputDigest, Tally } from "../store/index.js";
import { describeEndpoints, describeSandbox, UsageMeter } from "../usage.js";
import { stageContext } from "./context.js";
import { type ExecutionResult, executeGlobalStage, executeRecordStage, type InputCheck } from "./execute.js";
import { createProgress, formatDuration } from "./progress.js";
import { type ShardSpec, shardTest } from "./shard.js";
import { invocationOf, outputHashOf } from "./status.js";
import type { RunnerCore, StageReport, StageStatus } from "./types.js";

/** Runs one stage whose lock the caller holds. */
export async function runStage(
  r: RunnerCore,
  stage: Stage<unknown>,
  status: StageStatus,
  signal: AbortSignal,
  forced: boolean,
  shard?: ShardSpec,
): Promise<StageReport> {
  const store = r.store(stage.name, shard);
  const label = store.label;
  const previous = status.manifest;
  // LLM usage and sandbox programs go on from the previous run's checkpoint (approximate after a kill)
  const usage = new UsageMeter(previous?.usage, previous?.sandbox);
  const started = Date.now();
  const now = new Date().toISOString();
  const manifest: Manifest = {
    version: 1,
    stage: stage.name,
    state: "running",
    configHash: status.configHash,
    upstream: Object.fromEntries(stage.upstream.map((u) => [u, outputHashOf(r.status(u))])),
    counts: previous?.counts ?? { in: 0, out: 0, rejected: 0, failed: 0 },
    usage: usage.totals,
    runs: (previous?.runs ?? 0) + 1,
    pid: process.pid,
    host: hostname(),
    ...(shard ? { shard: { index: shard.index, count: shard.count }, invocation: invocationOf(r) } : {}),
    ...(previous?.sandbox ? { sandbox: previous.sandbox } : {}),
    startedAt: previous?.startedAt ?? now,
    updatedAt: now,
    elapsedMs: previous?.elapsedMs ?? 0,
    ...(previous?.inputCheck ? { inputCheck: previous.inputCheck } : {}),
  };
  store.saveManifest(manifest);
  const tally = new Tally();
  const ctx = stageContext(r, stage, signal, usage, shard, tally);
  const elapsed = () => manifest.elapsedMs + (Date.now() - started);
  let counts = manifest.counts;
  const programs = () => (usage.programs ? { sandbox: usage.programs } : {});
  const partial = (lastError?: string) =>
    store.saveManifest({
      ...manifest,
      state: "partial",
      counts,
      usage: usage.totals,
      ...programs(),
      elapsedMs: elapsed(),
      pid: undefined,
      ...(lastError ? { lastError } : {}),
    });
  const again = forced ? "Run the same command again without --force" : "Run the same command again";
  let result: ExecutionResult;
  let state: unknown;
  let opened = false;
  try {
    state = await stage.open?.(ctx);
    opened = true;
    const progress = createProgress(label, {
      total: shard ? undefined : progressTotal(stage, ctx),
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
        store.saveManifest({ ...manifest, counts, usage: usage.totals, ...programs(), elapsedMs: elapsed() });
      },
      ...(previous?.inputCheck ? { previousInput: previous.inputCheck } : {}),
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
        : await executeGlobalStage(stage, ctx, state, store, hooks, new OutputDigest());
    counts = result.counts;
    if (!result.interrupted && result.counts.failed === 0) {
      result.stats ??= await stage.summarize?.(ctx, state, tally);
    }
  } catch (error) {
    partial((error as Error)?.message ?? String(error));
    throw error;
  } finally {
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
    ...manifest,
    state: "complete",
    counts: result.counts,
    usage: usage.totals,
    elapsedMs: elapsed(),
    pid: undefined,
    outputHash: result.outputHash,
    finishedAt: new Date().toISOString(),
    ...(result.stats ? { stats: result.stats } : {}),
    ...programs(),
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

/** Records to expect, for the progress bar: the upstream's output count when that is the input. */
function progressTotal(stage: Stage<unknown>, ctx: StageContext<unknown>): number | undefined {
  if (stage.kind === "record" && !stage.input) return ctx.countOf(stage.upstream[0]!);
  return undefined;
}
