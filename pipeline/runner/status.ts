// Where a stage stands for the current configuration: not started, running, partial, complete, stale
// or switched off, and why; for a stage run in shards, every shard's state and the stage's as one
// (complete when all N are, and then it hashes and counts as their union). Staleness lives here, and
// so does `reset`, which marks every stage downstream stale.
import { hostname } from "node:os";
import { join, resolve } from "node:path";
import { isSecretSet } from "../config/load.js";
import { UserError } from "../errors.js";
import { settingChanges } from "../hash.js";
import { shellQuote } from "../launch/invocation.js";
import type { Stage } from "../stage.js";
import type { Manifest } from "../store/manifest.js";
import { StoreError } from "../store/parts.js";
import { listShards } from "../store/shard-dirs.js";
import { combineDigests, isRunning } from "../store/stage-store.js";
import { sumCounters } from "../store/tally.js";
import { emptyUsage, sumSandbox, sumUsage } from "../usage.js";
import { RunnerPlan, SWITCHED_OFF, switchedOffReason } from "./plan.js";
import { type ShardSpec, shardArg } from "./shard.js";

export type StageState = "not started" | "running" | "partial" | "complete" | "stale" | "disabled";

export interface StageStatus {
  stage: string;
  state: StageState;
  /** why a stage is stale or partial */
  reason?: string;
  configHash: string;
  /** a one-process stage's manifest; for a sharded stage, the shards' manifests summed */
  manifest?: Manifest;
  /** a stage run in shards: every shard 0..N-1, each with its state */
  shards?: ShardStatus[];
}

export type ShardState = "not started" | "running" | "done" | "failed" | "stale";

export interface ShardStatus {
  index: number;
  count: number;
  state: ShardState;
  /** why it failed or is stale, who runs it */
  reason?: string;
  manifest?: Manifest;
  /** the command that (re)runs it, for every shard that is not done or running */
  command?: string;
}

type AggregateState = "running" | "partial" | "complete" | "stale";

export class RunnerStatus extends RunnerPlan {
  /** Where a stage stands for the current configuration, and why. */
  status(name: string): StageStatus {
    const stage = this.stage(name);
    const configHash = this.configHash(stage);
    if (this.switchedOff.has(name))
      return { stage: name, state: "disabled", reason: switchedOffReason(name), configHash };
    const manifest = this.store(name).manifest();
    if (!manifest) {
      const count = this.shardCount(name);
      if (count !== undefined) return this.shardedStatus(stage, configHash, count);
      return { stage: name, state: "not started", configHash };
    }
    const base = { stage: name, configHash, manifest };
    if (isRunning(manifest)) {
      return { ...base, state: "running", reason: `process ${manifest.pid}` };
    }
    const stale = staleness(
      stage,
      manifest,
      configHash,
      (up) => this.status(up),
      this.configOf(stage),
      () => this.configSettings(stage),
    );
    if (stale) return { ...base, state: "stale", reason: stale };
    if (manifest.state === "complete") {
      // damaged after it completed (its reader stops on it): `run` recomputes it like any stale stage
      const damage = this.store(name).damage(manifest);
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

  /**
   * N of a stage run in shards: the count of the shards that have a manifest (a refused or just
   * started shard leaves only a lock). Of two counts (an N changed by hand) the one written last.
   */
  shardCount(name: string): number | undefined {
    let best: { count: number; at: string } | undefined;
    for (const spec of listShards(join(this.dataDir, name))) {
      const manifest = this.store(name, spec).manifest();
      if (manifest && (!best || manifest.updatedAt > best.at))
        best = { count: spec.count, at: manifest.updatedAt };
    }
    return best?.count;
  }

  /**
   * What this process was started with, as a shard's manifest records it (`invocation`), less any
   * `--set` of a key: a rerun takes its key from the environment (or the config file) instead.
   */
  invocation(): NonNullable<Manifest["invocation"]> {
    const sets = (this.loaded.sets ?? []).filter((set) => !isSecretSet(set));
    return {
      ...(this.loaded.source.startsWith("(") ? {} : { config: resolve(this.loaded.source) }),
      ...(sets.length ? { sets } : {}),
      ...(this.options.limit !== undefined ? { limit: this.options.limit } : {}),
    };
  }

  /**
   * The command that runs one shard, as `status` and refusals print it. A shard that ran for this
   * configuration (`manifest`) is rerun as it was run: its config file, `--set`s and `--limit`; any
   * other with what this process was given, the configuration it judges the shards by.
   */
  shardCommand(name: string, shard: ShardSpec, manifest?: Manifest): string {
    const recorded = manifest?.invocation;
    const given =
      recorded && manifest.configHash === this.configHash(this.stage(name)) ? recorded : this.invocation();
    const config = given.config ? ` --config ${shellQuote(given.config)}` : "";
    const sets = (given.sets ?? []).map((set) => ` --set ${shellQuote(set)}`).join("");
    const limit = given.limit !== undefined ? ` --limit ${given.limit}` : "";
    // the data dir too: a shard rerun elsewhere, or with --data-dir, must find the same files
    return `pnpm pipeline run ${name} --only --shard ${shardArg(shard)}${config}${sets} --data-dir ${shellQuote(this.dataDir)}${limit}`;
  }

  /** One shard's state; `statusOf` answers for the upstream stages (computed once for all shards). */
  shardStatus(
    stage: Stage<unknown>,
    shard: ShardSpec,
    configHash = this.configHash(stage),
    statusOf: (name: string) => StageStatus = (name) => this.status(name),
  ): ShardStatus {
    const manifest = this.store(stage.name, shard).manifest();
    const base = { index: shard.index, count: shard.count };
    const command = this.shardCommand(stage.name, shard, manifest);
    if (!manifest) return { ...base, state: "not started", command };
    const where = `process ${manifest.pid}${manifest.host ? ` on ${manifest.host}` : ""}`;
    if (isRunning(manifest)) return { ...base, state: "running", reason: where, manifest };
    const ours = manifest.pid === process.pid && (manifest.host ?? hostname()) === hostname();
    if (manifest.state === "running" && !ours) {
      return { ...base, state: "failed", reason: `${where} died`, manifest, command };
    }
    const stale = staleness(stage, manifest, configHash, statusOf, this.configOf(stage), () =>
      this.configSettings(stage),
    );
    if (stale) return { ...base, state: "stale", reason: stale, manifest, command };
    if (manifest.state === "complete") return { ...base, state: "done", manifest };
    const reason =
      manifest.lastError ??
      (manifest.counts.failed > 0 ? `${manifest.counts.failed} records failed` : "interrupted");
    return { ...base, state: "failed", reason, manifest, command };
  }

  private shardedStatus(stage: Stage<unknown>, configHash: string, count: number): StageStatus {
    const upstream = new Map(stage.upstream.map((u) => [u, this.status(u)]));
    const statusOf = (name: string) => upstream.get(name) ?? this.status(name);
    const shards: ShardStatus[] = [];
    for (let index = 0; index < count; index++) {
      shards.push(this.shardStatus(stage, { index, count }, configHash, statusOf));
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

  /**
   * Removes a stage's outputs and marks every stage downstream of it stale. Refuses while the stage
   * or anything downstream of it is being run by another process.
   */
  reset(name: string, reason = `upstream ${name} was reset`, options: { purge?: boolean } = {}): void {
    this.stage(name);
    const release = this.store(name).lock();
    try {
      // shards take only their own locks: a live one is seen in its manifest
      const own = this.statusForReset(name);
      if (own?.state === "running" && this.shardCount(name) !== undefined) {
        throw new UserError(`cannot reset ${name} while its shards are running: ${own.reason}`);
      }
      for (const down of this.downstreamOf(name)) {
        const status = this.statusForReset(down);
        if (status?.state === "running") {
          throw new UserError(
            `cannot reset ${name} while ${down} (downstream) is being run by ${status.reason}`,
          );
        }
      }
      this.resetHeld(name, reason, options);
    } finally {
      release();
    }
  }

  /** `reset` for a caller that holds the stage's lock. */
  resetHeld(name: string, reason = `upstream ${name} was reset`, options: { purge?: boolean } = {}): void {
    this.store(name).reset(options);
    for (const down of this.downstreamOf(name)) {
      const shards = listShards(join(this.dataDir, down)).map((shard) => this.store(down, shard));
      for (const store of [this.store(down), ...shards]) {
        // an unreadable downstream manifest cannot be marked; its own reset is what its error advises
        const manifest = readableOrUndefined(() => store.manifest());
        // the newest reset's reason: an older mark may have been lifted since (its upstream came back the same)
        if (manifest && manifest.staleReason !== reason)
          store.saveManifest({ ...manifest, staleReason: reason });
      }
    }
  }

  /**
   * A downstream stage's status as far as its manifests can be read: reset is the advice for an
   * unreadable manifest, so it must not fail on one (the stage's own, read for staleness, included).
   * An unreadable stage still counts as running while a live process holds its manifest.
   */
  private statusForReset(name: string): Pick<StageStatus, "state" | "reason"> | undefined {
    try {
      return this.status(name);
    } catch (error) {
      if (!(error instanceof StoreError)) throw error;
      const manifest = readableOrUndefined(() => this.store(name).manifest());
      return manifest && isRunning(manifest)
        ? { state: "running", reason: `process ${manifest.pid}` }
        : undefined;
    }
  }
}

function staleness(
  stage: Stage<unknown>,
  manifest: Manifest,
  configHash: string,
  readStatus: (name: string) => StageStatus,
  config: unknown,
  settings: () => Record<string, string> | undefined,
): string | undefined {
  // each upstream read once here: the content check and the loop below would each read it again
  const seen = new Map<string, StageStatus>();
  const statusOf = (name: string) => seen.get(name) ?? seen.set(name, readStatus(name)).get(name)!;
  // a partial stage keeps the mark: a recomputed upstream may list the same records in another order
  // than its resume check saw, so it starts over
  if (manifest.staleReason && !(manifest.state === "complete" && sameContent(stage, manifest, statusOf)))
    return manifest.staleReason;
  if (manifest.configHash !== configHash) {
    const changed = stage.inputChanged?.({ config, summary: manifest.stats });
    if (changed) return changed;
    const now = settings();
    const which = manifest.configSettings && now && settingChanges(stage.name, manifest.configSettings, now);
    return which ? `its configuration changed: ${which}` : "its configuration changed";
  }
  for (const upstream of stage.upstream) {
    const up = statusOf(upstream);
    const was = manifest.upstream[upstream];
    if ((up.state === "disabled") !== (was === SWITCHED_OFF)) {
      return `upstream ${upstream} was switched ${up.state === "disabled" ? "off" : "on"}`;
    }
    if (up.state === "stale") return `upstream ${upstream} is stale`;
    if (!usable(up)) return `upstream ${upstream} is ${up.state}`;
    if (outputHashOf(up) !== was) return `upstream ${upstream} changed`;
    // the same outputs with other rejects (a shard rerun marks nothing downstream): read as changed
    const content = manifest.upstreamContent?.[upstream];
    if (content !== undefined && contentOf(up) !== undefined && contentOf(up) !== content)
      return `upstream ${upstream} changed`;
  }
  return undefined;
}

/**
 * Whether every upstream is readable with the very content it had when the stage ran: a reset or
 * forced upstream that was recomputed to the same outputs and rejects leaves its downstream
 * valid, so a changed source file does not redo the sandbox runs of an audit it does not feed.
 */
function sameContent(
  stage: Stage<unknown>,
  manifest: Manifest,
  statusOf: (name: string) => StageStatus,
): boolean {
  const recorded = manifest.upstreamContent;
  if (!recorded) return false;
  return stage.upstream.every((u) => {
    const up = statusOf(u);
    const content = usable(up) ? contentOf(up) : undefined;
    return content !== undefined && content === recorded[u];
  });
}

/**
 * What a downstream stage can read of a complete stage (ctx.read of its outputs and rejects; its
 * summary is the report's, and holds run-dependent figures such as cache hits). Undefined where it is
 * not known (a stage completed by an older version).
 */
export function contentOf(status: StageStatus): string | undefined {
  if (status.state === "disabled") return SWITCHED_OFF;
  const m = status.manifest;
  if (m?.outputHash === undefined || m.rejectsHash === undefined) return undefined;
  return `${m.outputHash}/${m.rejectsHash}`;
}

/** `upstreamContent` for a manifest, where every upstream's content is known. */
export function upstreamContentOf(upstream: readonly StageStatus[]): {
  upstreamContent?: Record<string, string>;
} {
  const contents: Record<string, string> = {};
  for (const up of upstream) {
    const content = contentOf(up);
    if (content === undefined) return {};
    contents[up.stage] = content;
  }
  return { upstreamContent: contents };
}

/** An upstream a stage can read: complete, or switched off (it then reads nothing of it). */
export function usable(status: StageStatus): boolean {
  return status.state === "complete" || status.state === "disabled";
}

/** What a stage records of an upstream it read, to see later whether that upstream changed. */
export function outputHashOf(status: StageStatus): string {
  return status.state === "disabled" ? SWITCHED_OFF : (status.manifest?.outputHash ?? "");
}

/** Shards listed in a message before "and N more". */
const LISTED = 4;

function list(shards: ShardStatus[]): string {
  const shown = shards.slice(0, LISTED).map((s) => String(s.index));
  return shards.length > LISTED ? `${shown.join(", ")} and ${shards.length - LISTED} more` : shown.join(", ");
}

/**
 * The stage's state and a reason that names the shards in the way and the commands that run them:
 * `status` shows it, and a downstream stage that refuses to start repeats it.
 */
export function aggregateState(
  shards: ShardStatus[],
  count: number,
): { state: AggregateState; reason?: string } {
  const by = (state: ShardState) => shards.filter((s) => s.state === state);
  const running = by("running");
  const done = by("done");
  const failed = by("failed");
  const stale = by("stale");
  const missing = by("not started");
  if (done.length === count) return { state: "complete" };
  const tally = [
    done.length ? `${done.length} done` : "",
    running.length ? `${running.length} running (${list(running)})` : "",
    failed.length ? `${failed.length} failed (${list(failed)})` : "",
    stale.length ? `${stale.length} stale (${list(stale)})` : "",
    missing.length ? `${missing.length} not started (${list(missing)})` : "",
  ]
    .filter(Boolean)
    .join(", ");
  if (running.length > 0) return { state: "running", reason: `${count} shards: ${tally}` };
  // nothing current is left (a new configuration, or an upstream that changed): recompute it all
  if (done.length === 0 && failed.length === 0 && stale.length > 0) {
    return { state: "stale", reason: `${count} shards, all stale: ${stale[0]!.reason}` };
  }
  const todo = [...failed, ...stale, ...missing].sort((a, b) => a.index - b.index);
  const commands = todo.slice(0, LISTED).map((s) => `\`${s.command}\``);
  const more =
    todo.length > LISTED
      ? ` (and the same for shards ${todo
          .slice(LISTED)
          .map((s) => s.index)
          .join(", ")})`
      : "";
  return {
    state: "partial",
    reason: `${count} shards: ${tally}; run ${commands.join(", ")}${more}`,
  };
}

/**
 * One manifest for the whole stage: counts, usage and sandbox programs summed over the shards,
 * elapsed time the longest shard's (they run side by side), and, once every shard is done, the
 * combined output digest, which equals the digest of a one-process run over the same records.
 * Counters and reject reasons are summed too; `stats` (a summary of the whole stage) is not: Runner.manifestOf makes it from the union.
 */
export function aggregateManifest(
  stage: string,
  configHash: string,
  shards: ShardStatus[],
  state: AggregateState,
): Manifest | undefined {
  const manifests = shards.map((s) => s.manifest).filter((m): m is Manifest => m !== undefined);
  if (manifests.length === 0) return undefined;
  const counts = { in: 0, out: 0, rejected: 0, failed: 0 };
  let usage = emptyUsage();
  for (const m of manifests) {
    for (const key of Object.keys(counts) as (keyof typeof counts)[]) counts[key] += m.counts[key];
    if (m.usage) usage = sumUsage(usage, m.usage);
  }
  const times = (pick: (m: Manifest) => string | undefined) =>
    manifests
      .map(pick)
      .filter((t): t is string => t !== undefined)
      .sort();
  const complete = state === "complete";
  const finished = times((m) => m.finishedAt);
  const counters = sumCounters(manifests.map((m) => m.counters));
  const rejectReasons = sumCounters(manifests.map((m) => m.rejectReasons));
  const sandbox = sumSandbox(manifests.map((m) => m.sandbox));
  return {
    version: 1,
    stage,
    state: complete ? "complete" : state === "running" ? "running" : "partial",
    configHash,
    upstream: manifests[0]!.upstream,
    ...(manifests[0]!.upstreamContent ? { upstreamContent: manifests[0]!.upstreamContent } : {}),
    counts,
    usage,
    runs: manifests.reduce((n, m) => n + m.runs, 0),
    startedAt: times((m) => m.startedAt)[0]!,
    updatedAt: times((m) => m.updatedAt).at(-1)!,
    elapsedMs: Math.max(...manifests.map((m) => m.elapsedMs)),
    ...(complete ? { outputHash: combineDigests(manifests.map((m) => m.outputHash ?? "")) } : {}),
    ...(complete && manifests.every((m) => m.rejectsHash !== undefined)
      ? { rejectsHash: combineDigests(manifests.map((m) => m.rejectsHash!)) }
      : {}),
    ...(complete && finished.length ? { finishedAt: finished.at(-1)! } : {}),
    ...(counters ? { counters } : {}),
    ...(rejectReasons ? { rejectReasons } : {}),
    ...(sandbox ? { sandbox } : {}),
  };
}

/** `read()`, or undefined where the store says its file is damaged. */
function readableOrUndefined<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch (error) {
    if (error instanceof StoreError) return undefined;
    throw error;
  }
}
