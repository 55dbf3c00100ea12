// How a sharded stage stands, from its shards' manifests: complete when all N shards are complete
// for the current configuration, and then it hashes (and counts) as the union of its shards.
import type { Manifest } from "../store/index.js";
import { combineDigests, sumCounters } from "../store/index.js";
import { emptyUsage, type SandboxUsage, sumSandbox, sumUsage, type UsageTotals } from "../usage.js";

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

export type AggregateState = "running" | "partial" | "complete" | "stale";

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

function addUsage(a: UsageTotals, b: UsageTotals | undefined): UsageTotals {
  return b ? sumUsage(a, b) : a;
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
    counts.in += m.counts.in;
    counts.out += m.counts.out;
    counts.rejected += m.counts.rejected;
    counts.failed += m.counts.failed;
    usage = addUsage(usage, m.usage);
  }
  const times = (pick: (m: Manifest) => string | undefined) =>
    manifests
      .map(pick)
      .filter((t): t is string => t !== undefined)
      .sort();
  const complete = state === "complete";
  const finished = times((m) => m.finishedAt);
  return {
    version: 1,
    stage,
    state: complete ? "complete" : state === "running" ? "running" : "partial",
    configHash,
    upstream: manifests[0]!.upstream,
    counts,
    usage,
    runs: manifests.reduce((n, m) => n + m.runs, 0),
    startedAt: times((m) => m.startedAt)[0]!,
    updatedAt: times((m) => m.updatedAt).at(-1)!,
    elapsedMs: Math.max(...manifests.map((m) => m.elapsedMs)),
    ...(complete ? { outputHash: combineDigests(manifests.map((m) => m.outputHash ?? "")) } : {}),
    ...(complete && finished.length ? { finishedAt: finished.at(-1)! } : {}),
    ...summed("counters", sumCounters(manifests.map((m) => m.counters))),
    ...summed("rejectReasons", sumCounters(manifests.map((m) => m.rejectReasons))),
    ...sandboxOf(sumSandbox(manifests.map((m) => m.sandbox))),
  };
}

function sandboxOf(sandbox: SandboxUsage | undefined): { sandbox?: SandboxUsage } {
  return sandbox ? { sandbox } : {};
}

function summed<K extends string>(key: K, counters: Record<string, number> | undefined) {
  return counters ? ({ [key]: counters } as { [k in K]: Record<string, number> }) : {};
}
