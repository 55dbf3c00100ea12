// A result a stage keeps so that the sandbox never runs the same programs for it twice (an execution
// journal's run, a verdict cache's verdict), counted as running it would be: a kept result an earlier
// process made counts the programs saved beside it, once (`replayKept`); a result made now runs
// through a face that also counts its programs apart, to be kept with that cost (`makeCounted`).
import { SandboxMeter, type SandboxUsage } from "../usage.js";
import { alsoCountingIn, countReplayed } from "./metered.js";
import type { CodeRunner } from "./types.js";

/** Where a stage keeps its results: the one under a key, and what it cost when an earlier process ran it. */
export interface KeptResults<T> {
  get(key: string): T | undefined;
  /** the first time an earlier process's result is replayed, its cost; nothing after that */
  replayCost(key: string): SandboxUsage | undefined;
}

/**
 * The result kept under `key`, if any, its programs counted where `runner` counts them (the cost an
 * earlier process saved, the first time it is replayed).
 */
export function replayKept<T>(runner: CodeRunner, kept: KeptResults<T>, key: string): T | undefined {
  const known = kept.get(key);
  if (known !== undefined) countReplayed(runner, kept.replayCost(key));
  return known;
}

/** What `make` makes through `runner`, handed to `keep` first with what its programs cost. */
export async function makeCounted<T>(
  runner: CodeRunner,
  make: (runner: CodeRunner) => Promise<T>,
  keep: (result: T, cost: SandboxUsage | undefined) => void | Promise<void>,
): Promise<T> {
  const cost = new SandboxMeter();
  const result = await make(alsoCountingIn(runner, cost));
  await keep(result, cost.saved());
  return result;
}
