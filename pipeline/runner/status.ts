// Where a stage stands for the current configuration: not started, running, partial, complete, stale
// or switched off, and why; for a stage run in shards, every shard's state and the stage's as one.
// Staleness lives here: a stage is stale when its own config (or fingerprint) changed, or an
// upstream's outputs changed (or it was switched on or off) since it ran.
import { hostname } from "node:os";
import { join, resolve } from "node:path";
import { isSecretSet } from "../config/load.js";
import type { Stage } from "../stage.js";
import { isRunning, listShards, type Manifest } from "../store/index.js";
import { type ShardSpec, shardArg } from "./shard.js";
import { aggregateManifest, aggregateState, type ShardStatus } from "./shard-status.js";
import { SWITCHED_OFF, switchedOffReason } from "./switch.js";
import type { RunnerCore, StageStatus } from "./types.js";

export function stageStatus(r: RunnerCore, name: string): StageStatus {
  const stage = r.stage(name);
  const configHash = r.configHash(stage);
  if (r.switchedOff.has(name))
    return { stage: name, state: "disabled", reason: switchedOffReason(name), configHash };
  const manifest = r.store(name).manifest();
  if (!manifest) {
    const count = r.shardCount(name);
    if (count !== undefined) return shardedStatus(r, stage, configHash, count);
    return { stage: name, state: "not started", configHash };
  }
  const base = { stage: name, configHash, manifest };
  if (isRunning(manifest)) {
    return { ...base, state: "running", reason: `process ${manifest.pid}` };
  }
  const stale = staleness(stage, manifest, configHash, (up) => r.status(up));
  if (stale) return { ...base, state: "stale", reason: stale };
  if (manifest.state === "complete") {
    // damaged after it completed (its reader stops on it): `run` recomputes it like any stale stage
    const damage = r.store(name).damage(manifest);
    if (damage) {
      return { ...base, state: "stale", reason: `its parts were damaged after it completed: ${damage}` };
    }
    return { ...base, state: "complete" };
  }
  const reason =
    manifest.lastError ??
    (manifest.counts.failed > 0
      ? `${manifest.counts.failed} failed, retried on the next run`
      : "interrupted");
  return { ...base, state: "partial", reason };
}

function staleness(
  stage: Stage<unknown>,
  manifest: Manifest,
  configHash: string,
  statusOf: (name: string) => StageStatus,
): string | undefined {
  if (manifest.staleReason) return manifest.staleReason;
  if (manifest.configHash !== configHash) return "its configuration changed";
  for (const upstream of stage.upstream) {
    const up = statusOf(upstream);
    const was = manifest.upstream[upstream];
    if ((up.state === "disabled") !== (was === SWITCHED_OFF)) {
      return `upstream ${upstream} was switched ${up.state === "disabled" ? "off" : "on"}`;
    }
    if (up.state === "stale") return `upstream ${upstream} is stale`;
    if (!usable(up)) return `upstream ${upstream} is ${up.state}`;
    if (outputHashOf(up) !== was) return `upstream ${upstream} changed`;
  }
  return undefined;
}

/**
 * N of a stage run in shards: the count of the shards that have a manifest (a refused or just
 * started shard leaves only a lock). Of two counts (an N changed by hand) the one written last.
 */
export function shardCountOf(r: RunnerCore, name: string): number | undefined {
  let best: { count: number; at: string } | undefined;
  for (const spec of listShards(join(r.dataDir, name))) {
    const manifest = r.store(name, spec).manifest();
    if (manifest && (!best || manifest.updatedAt > best.at))
      best = { count: spec.count, at: manifest.updatedAt };
  }
  return best?.count;
}

/**
 * What this process was started with, as a shard's manifest records it (`invocation`), less any
 * `--set` of a key: a rerun takes its key from the environment (or the config file) instead.
 */
export function invocationOf(r: RunnerCore): NonNullable<Manifest["invocation"]> {
  const sets = (r.loaded.sets ?? []).filter((set) => !isSecretSet(set));
  return {
    ...(r.loaded.source.startsWith("(") ? {} : { config: resolve(r.loaded.source) }),
    ...(sets.length ? { sets } : {}),
    ...(r.options.limit !== undefined ? { limit: r.options.limit } : {}),
  };
}

/**
 * The command that runs one shard, as `status` and refusals print it. A shard that ran for this
 * configuration (`manifest`) is rerun as it was run: its config file, `--set`s and `--limit`; any
 * other with what this process was given, the configuration it judges the shards by.
 */
export function shardCommandOf(r: RunnerCore, name: string, shard: ShardSpec, manifest?: Manifest): string {
  const recorded = manifest?.invocation;
  const given = recorded && manifest.configHash === r.configHash(r.stage(name)) ? recorded : invocationOf(r);
  const config = given.config ? ` --config ${shellWord(given.config)}` : "";
  const sets = (given.sets ?? []).map((set) => ` --set ${shellWord(set)}`).join("");
  const limit = given.limit !== undefined ? ` --limit ${given.limit}` : "";
  // the data dir too: a shard rerun elsewhere, or with --data-dir, must find the same files
  return `pnpm pipeline run ${name} --only --shard ${shardArg(shard)}${config}${sets} --data-dir ${shellWord(r.dataDir)}${limit}`;
}

/** One shard's state; `statusOf` answers for the upstream stages (computed once for all shards). */
export function shardStatusOf(
  r: RunnerCore,
  stage: Stage<unknown>,
  shard: ShardSpec,
  configHash: string,
  statusOf: (name: string) => StageStatus,
): ShardStatus {
  const manifest = r.store(stage.name, shard).manifest();
  const base = { index: shard.index, count: shard.count };
  const command = r.shardCommand(stage.name, shard, manifest);
  if (!manifest) return { ...base, state: "not started", command };
  const where = `process ${manifest.pid}${manifest.host ? ` on ${manifest.host}` : ""}`;
  if (isRunning(manifest)) return { ...base, state: "running", reason: where, manifest };
  const ours = manifest.pid === process.pid && (manifest.host ?? hostname()) === hostname();
  if (manifest.state === "running" && !ours) {
    return { ...base, state: "failed", reason: `${where} died`, manifest, command };
  }
  const stale = staleness(stage, manifest, configHash, statusOf);
  if (stale) return { ...base, state: "stale", reason: stale, manifest, command };
  if (manifest.state === "complete") return { ...base, state: "done", manifest };
  const reason =
    manifest.lastError ??
    (manifest.counts.failed > 0 ? `${manifest.counts.failed} records failed` : "interrupted");
  return { ...base, state: "failed", reason, manifest, command };
}

function shardedStatus(r: RunnerCore, stage: Stage<unknown>, configHash: string, count: number): StageStatus {
  const upstream = new Map(stage.upstream.map((u) => [u, r.status(u)]));
  const statusOf = (name: string) => upstream.get(name) ?? r.status(name);
  const shards: ShardStatus[] = [];
  for (let index = 0; index < count; index++) {
    shards.push(r.shardStatus(stage, { index, count }, configHash, statusOf));
  }
  const { state, reason } = aggregateState(shards, count);
  const manifest = aggregateManifest(stage.name, configHash, shards, state);
  return {
    stage: stage.name,
    state,
    configHash,
    shards,
    ...(reason ? { reason } : {}),
    ...(manifest ? { manifest } : {}),
  };
}

/** An upstream a stage can read: complete, or switched off (it then reads nothing of it). */
export function usable(status: StageStatus): boolean {
  return status.state === "complete" || status.state === "disabled";
}

/** What a stage records of an upstream it read, to see later whether that upstream changed. */
export function outputHashOf(status: StageStatus): string {
  return status.state === "disabled" ? SWITCHED_OFF : (status.manifest?.outputHash ?? "");
}

/** A path as one shell word: quoted only when it needs to be. */
function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}
