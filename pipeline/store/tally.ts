// A stage's counters (`ctx.stat`), reject reasons and sandbox programs, counted as entries are
// committed or scanned back, so a resumed run, and the union of a stage's shards, count exactly what
// was committed.
import { SandboxMeter, type SandboxUsage } from "../usage.js";
import type { Entry } from "./parts.js";

export type Counters = Record<string, number>;

export class Tally {
  readonly counters: Counters = {};
  readonly rejectReasons: Counters = {};
  /** programs run in the sandbox (outside a record: a global stage's) and their busy time */
  readonly sandbox = new SandboxMeter();

  add(into: Counters, name: string, value: number): void {
    into[name] = (into[name] ?? 0) + value;
  }

  /** one committed entry: its counters, its rejects' reasons and its sandbox programs */
  addEntry(entry: Pick<Entry, "r" | "t" | "x">): void {
    for (const [name, value] of Object.entries(entry.t ?? {})) this.add(this.counters, name, value);
    for (const reject of entry.r ?? []) this.add(this.rejectReasons, reject.reason, 1);
    this.sandbox.add(entry.x);
  }

  /** adds another tally's counts (a scan of what earlier runs committed) */
  addTally(other: Tally): void {
    for (const [name, value] of Object.entries(other.counters)) this.add(this.counters, name, value);
    for (const [name, value] of Object.entries(other.rejectReasons))
      this.add(this.rejectReasons, name, value);
    this.sandbox.add(other.sandbox.totals);
  }

  /** what the manifest keeps: only the non-empty maps, keys in the order they were first counted */
  saved(): { counters?: Counters; rejectReasons?: Counters; sandbox?: SandboxUsage } {
    const sandbox = this.sandbox.saved();
    return {
      ...(nonEmpty(this.counters) ? { counters: { ...this.counters } } : {}),
      ...(nonEmpty(this.rejectReasons) ? { rejectReasons: { ...this.rejectReasons } } : {}),
      ...(sandbox ? { sandbox } : {}),
    };
  }
}

/** Counters summed over many manifests (a sharded stage's shards); undefined when none has any. */
export function sumCounters(all: readonly (Counters | undefined)[]): Counters | undefined {
  const tally = new Tally();
  for (const counters of all) {
    for (const [name, value] of Object.entries(counters ?? {})) tally.add(tally.counters, name, value);
  }
  return nonEmpty(tally.counters) ? tally.counters : undefined;
}

const nonEmpty = (counters: Counters) => Object.keys(counters).length > 0;
