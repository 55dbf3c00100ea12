// `run` in one process: the planned stages in pipeline order, each skipped when up to date, reset
// first when forced or stale, refused when an upstream is not complete or it is being run in shards,
// estimated instead of run on --dry-run.
import { InterruptedError, UserError } from "../errors.js";
import type { Stage } from "../stage.js";
import { estimateStage } from "./dry-run.js";
import { resetHeld } from "./reset.js";
import { runStage } from "./run-stage.js";
import type { ShardSpec } from "./shard.js";
import { usable } from "./status.js";
import { switchedOffReason } from "./switch.js";
import type { RunnerCore, RunOptions, StageReport } from "./types.js";

export async function runAll(
  r: RunnerCore,
  targets: string[],
  options: RunOptions = {},
): Promise<StageReport[]> {
  const signal = options.signal ?? new AbortController().signal;
  const reports: StageReport[] = [];
  for (const stage of r.plan(targets, options)) {
    if (signal.aborted) {
      throw new InterruptedError(`interrupted before ${stage.name}; run the same command again to go on`);
    }
    if (r.switchedOff.has(stage.name)) {
      if (targets.includes(stage.name)) {
        throw new UserError(
          `${stage.name} is switched off (${switchedOffReason(stage.name)} in ${r.loaded.source}); ` +
            `remove that key (or --set stages.${stage.name}.enabled=true) to run it`,
        );
      }
      r.log.info(
        `${stage.name}: switched off (${switchedOffReason(stage.name)}); the stages after it go on without it`,
      );
      reports.push({ stage: stage.name, action: "skipped" });
      continue;
    }
    // a dry run changes nothing: no forced recomputation, no reset of stale outputs before an estimate
    const forced = Boolean(options.force && !options.dryRun && targets.includes(stage.name));
    const release = r.store(stage.name).lock();
    try {
      if (forced) resetHeld(r, stage.name, `upstream ${stage.name} was forced`);
      let status = r.status(stage.name);
      if (status.state === "complete") {
        r.log.info(`${stage.name}: up to date (${status.manifest!.counts.out} records)`);
        reports.push({ stage: stage.name, action: "skipped", counts: status.manifest!.counts });
        continue;
      }
      checkUpstream(r, stage);
      // stale shards are recomputed here like any stale stage; live or unfinished ones are not ours
      if (status.shards && status.state !== "stale") {
        throw new UserError(
          `${stage.name} is being run in shards and is ${status.state}: ${status.reason}. ` +
            `Finish its shards, or run \`pnpm pipeline reset ${stage.name}\` to run it in one process instead.`,
        );
      }
      if (options.dryRun && stage.estimate) {
        reports.push(await estimateStage(r, stage, signal));
        break;
      }
      if (status.state === "stale") {
        r.log.info(`${stage.name}: stale (${status.reason}); recomputing`);
        resetHeld(r, stage.name);
        status = r.status(stage.name);
      }
      // parts without a manifest are left by a reset killed half-way: they belong to no run
      if (status.state === "not started") r.store(stage.name).reset();
      reports.push(await runStage(r, stage, status, signal, forced));
    } finally {
      release();
    }
  }
  return reports;
}

/** Refuses to run a stage while one of its upstream stages is not complete (or switched off). */
export function checkUpstream(r: RunnerCore, stage: Stage<unknown>, shard?: ShardSpec): void {
  for (const upstream of stage.upstream) {
    const up = r.status(upstream);
    if (!usable(up)) {
      const advice = up.shards
        ? "Run the shards named above"
        : shard
          ? `Run \`pnpm pipeline run ${upstream}\` first (a shard runs only its own stage)`
          : `Run \`pnpm pipeline run ${stage.name}\` without --only to run it first`;
      throw new UserError(
        `stage ${stage.name} needs ${upstream} to be complete, but it is ${up.state}${up.reason ? ` (${up.reason})` : ""}. ${advice}.`,
      );
    }
  }
}
