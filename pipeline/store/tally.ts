// A stage's counters (`ctx.stat`) and reject reasons, counted as entries are committed or scanned
// back, so a resumed run, and the union of a stage's shards, count exactly what was committed.
import type { Entry } from "./parts.js";

export type Counters = Record<string, number>;

export class Tally {
  readonly counters: Counters = {};
  readonly rejectReasons: Counters = {};

  add(into: Counters, name: string, value: number): void {
    into[name] = (into[name] ?? 0) + value;
  }

  /** one committed entry: its counters and its rejects' reasons */
  addEntry(entry: Pick<Entry, "r" | "t">): void {
    for (const [name, value] of Object.entries(entry.t ?? {})) this.add(this.counters, name, value);
    for (const reject of entry.r ?? []) this.add(this.rejectReasons, reject.reason, 1);
  }

  /** adds another tally's counts (a scan of what earlier runs committed) */
  addTally(other: Tally): void {
    for (const [name, value] of Object.entries(other.counters)) this.add(this.counters, name, value);
    for (const [name, value] of Object.entries(other.rejectReasons))
      this.add(this.rejectReasons, name, value);
  }

  /** what the manifest keeps: only the non-empty maps, keys in the order they were first counted */
  saved(): { counters?: Counters; rejectReasons?: Counters } {
    return {
      ...(nonEmpty(this.counters) ? { counters: { ...this.counters } } : {}),
      ...(nonEmpty(this.rejectReasons) ? { rejectReasons: { ...this.rejectReasons } } : {}),
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
