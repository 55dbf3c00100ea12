// `reset` and the reset that `run` does itself (--force, a stale stage): a stage's outputs removed and
// every stage downstream of it marked stale, refused while any of them is being run elsewhere.
import { join } from "node:path";
import { UserError } from "../errors.js";
import { isRunning, listShards, StoreError } from "../store/index.js";
import type { RunnerCore, StageStatus } from "./types.js";

/**
 * Removes a stage's outputs and marks every stage downstream of it stale. Refuses while the stage
 * or anything downstream of it is being run by another process.
 */
export function resetStage(
  r: RunnerCore,
  name: string,
  reason = `upstream ${name} was reset`,
  options: { purge?: boolean } = {},
): void {
  r.stage(name);
  const release = r.store(name).lock();
  try {
    // shards take only their own locks: a live one is seen in its manifest
    const own = statusForReset(r, name);
    if (own?.state === "running" && r.shardCount(name) !== undefined) {
      throw new UserError(`cannot reset ${name} while its shards are running: ${own.reason}`);
    }
    for (const down of r.downstreamOf(name)) {
      const status = statusForReset(r, down);
      if (status?.state === "running") {
        throw new UserError(
          `cannot reset ${name} while ${down} (downstream) is being run by ${status.reason}`,
        );
      }
    }
    resetHeld(r, name, reason, options);
  } finally {
    release();
  }
}

/** `reset` for a caller that holds the stage's lock. */
export function resetHeld(
  r: RunnerCore,
  name: string,
  reason = `upstream ${name} was reset`,
  options: { purge?: boolean } = {},
): void {
  r.store(name).reset(options);
  for (const down of r.downstreamOf(name)) {
    const shards = listShards(join(r.dataDir, down)).map((shard) => r.store(down, shard));
    for (const store of [r.store(down), ...shards]) {
      // an unreadable downstream manifest cannot be marked; its own reset is what its error advises
      const manifest = readableOrUndefined(() => store.manifest());
      if (manifest && !manifest.staleReason) store.saveManifest({ ...manifest, staleReason: reason });
    }
  }
}

/**
 * A downstream stage's status as far as its manifests can be read: reset is the advice for an
 * unreadable manifest, so it must not fail on one (the stage's own, read for staleness, included).
 * An unreadable stage still counts as running while a live process holds its manifest.
 */
function statusForReset(r: RunnerCore, name: string): Pick<StageStatus, "state" | "reason"> | undefined {
  try {
    return r.status(name);
  } catch (error) {
    if (!(error instanceof StoreError)) throw error;
    const manifest = readableOrUndefined(() => r.store(name).manifest());
    return manifest && isRunning(manifest)
      ? { state: "running", reason: `process ${manifest.pid}` }
      : undefined;
  }
}

/** Every stage that reads `name`, directly or through others. */
export function downstreamOfStage(r: RunnerCore, name: string): string[] {
  const result = new Set<string>();
  let grew = true;
  while (grew) {
    grew = false;
    for (const s of r.stages) {
      if (result.has(s.name)) continue;
      if (s.upstream.some((u) => u === name || result.has(u))) {
        result.add(s.name);
        grew = true;
      }
    }
  }
  return [...result];
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
