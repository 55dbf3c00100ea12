// `run --shard K/N`: shard K of each named record-wise stage and nothing else, refused when it would
// mix with what is there (a one-process run, shards of another N). A shard whose configuration
// changed starts over on its own files, as a stale one-process stage does; the stage is complete
// once all N have run with one configuration.
import { join } from "node:path";
import { InterruptedError, UserError } from "../errors.js";
import type { Stage } from "../stage.js";
import { listShards } from "../store/index.js";
import { estimateStage } from "./dry-run.js";
import { checkUpstream } from "./run-loop.js";
import { runStage } from "./run-stage.js";
import { type ShardSpec, shardArg } from "./shard.js";
import { switchedOffReason } from "./switch.js";
import type { RunnerCore, RunOptions, StageReport } from "./types.js";

/**
 * `run --shard K/N`: shard K of each named stage, and nothing else: upstream stages must be
 * complete (a shard never runs a stage that other shards would run too). Each shard takes only its
 * own lock and writes only under `<stage>/shards/K-of-N/`.
 */
export async function runShard(
  r: RunnerCore,
  targets: string[],
  shard: ShardSpec,
  options: RunOptions,
): Promise<StageReport[]> {
  const signal = options.signal ?? new AbortController().signal;
  const arg = shardArg(shard);
  for (const name of targets) {
    if (r.switchedOff.has(name)) {
      throw new UserError(
        `${name} is switched off (${switchedOffReason(name)} in ${r.loaded.source}); ` +
          `remove that key (or --set stages.${name}.enabled=true) to run it`,
      );
    }
    if (r.stage(name).kind !== "record") {
      throw new UserError(
        `--shard ${arg}: ${name} is a global stage; it runs in one process over the union of the shards. ` +
          `Run it without --shard (and outside a job array) once every shard upstream of it is complete.`,
      );
    }
  }
  const reports: StageReport[] = [];
  for (const stage of r.plan(targets, { only: true })) {
    if (signal.aborted) {
      throw new InterruptedError(`interrupted before ${stage.name}; run the same command again to go on`);
    }
    const label = `${stage.name} shard ${arg}`;
    if (checkShardLayout(r, stage, shard)) {
      r.log.info(`${label}: ${stage.name} is complete in one process; nothing to do`);
      reports.push({ stage: stage.name, action: "skipped" });
      continue;
    }
    const store = r.store(stage.name, shard);
    const release = store.lock();
    try {
      checkShardLayout(r, stage, shard, true);
      const forced = Boolean(options.force && !options.dryRun);
      if (forced) store.reset();
      let status = r.shardStatus(stage, shard);
      if (status.state === "done") {
        r.log.info(`${label}: up to date (${status.manifest!.counts.out} records)`);
        reports.push({ stage: stage.name, action: "skipped", counts: status.manifest!.counts });
        continue;
      }
      checkUpstream(r, stage, shard);
      if (options.dryRun && stage.estimate) {
        reports.push(await estimateStage(r, stage, signal, shard));
        break;
      }
      if (status.state === "stale") {
        r.log.info(`${label}: stale (${status.reason}); recomputing`);
        store.reset();
        status = r.shardStatus(stage, shard);
      }
      if (status.state === "not started") store.reset();
      const configHash = r.configHash(stage);
      const previous = status.manifest ? { manifest: status.manifest } : {};
      reports.push(
        await runStage(
          r,
          stage,
          { stage: stage.name, state: "partial", configHash, ...previous },
          signal,
          forced,
          shard,
        ),
      );
    } finally {
      release();
    }
  }
  return reports;
}

/**
 * Refuses a shard that would mix with what is there: outputs of a one-process run, or shards of
 * another N; warns (with `log`) of shards run with another configuration. True when a one-process
 * run completed the stage for this configuration already.
 */
function checkShardLayout(r: RunnerCore, stage: Stage<unknown>, shard: ShardSpec, log = false): boolean {
  const name = stage.name;
  const configHash = r.configHash(stage);
  if (r.store(name).manifest()) {
    const single = r.status(name);
    if (single.state === "complete") return true;
    throw new UserError(
      `${name} has outputs of a one-process run (${single.state}${single.reason ? `: ${single.reason}` : ""}), which shards cannot add to. ` +
        `Finish it with \`pnpm pipeline run ${name}\`, or run \`pnpm pipeline reset ${name}\` to start over in shards.`,
    );
  }
  const others = listShards(join(r.dataDir, name))
    .filter((spec) => spec.index !== shard.index || spec.count !== shard.count)
    .map((spec) => ({ spec, manifest: r.store(name, spec).manifest() }))
    .filter((s) => s.manifest !== undefined);
  const otherCount = others.find((s) => s.spec.count !== shard.count);
  if (otherCount) {
    const n = otherCount.spec.count;
    throw new UserError(
      `--shard ${shardArg(shard)}: ${name} was started in ${n} shards, not ${shard.count}, and records go to shards by N. ` +
        `Run its shards with --shard K/${n} (K from 0 to ${n - 1}), or run \`pnpm pipeline reset ${name}\` to start over in ${shard.count} shards.`,
    );
  }
  // Shards of another configuration are not refused: each shard's files are its own, so this one
  // starts over on its own files (when stale) and theirs stay as they are until they are run again.
  // The stage is complete, and readable by the stages after it, only once all N share one.
  const mixed = others.filter((s) => s.manifest!.configHash !== configHash);
  if (mixed.length > 0 && log) {
    const list = mixed.map((s) => s.spec.index).join(", ");
    r.log.warn(
      `${name} shard ${shardArg(shard)}: shard${mixed.length > 1 ? "s" : ""} ${list} ran with another configuration ` +
        `(hash ${mixed[0]!.manifest!.configHash.slice(0, 8)}, this one ${configHash.slice(0, 8)}); ${name} is complete only once ` +
        "every shard has run with the same one (the same config file, --set and --limit everywhere)",
    );
  }
  return false;
}
