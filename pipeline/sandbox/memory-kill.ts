// Who ended a run that the kernel's OOM killer ended. A run's cgroup counts every process of it the
// OOM killer took (`oom_kill`), whichever memory ran out: the run's own cap, or the host's or a
// parent cgroup's, where the run's tree volunteers first (oom_score_adj 1000). Only the first says
// anything about the program.
import { readFileSync } from "node:fs";
import { join } from "node:path";

/** What a run's memory cgroup says after it ended. */
export interface MemoryCounters {
  /** processes of the run the OOM killer ended, for whatever shortage */
  oomKills: number;
  /** times the run's own cap refused memory */
  limitHits: number;
  /** the run's peak usage, bytes; null where the kernel keeps none */
  peakBytes: number | null;
  /** the run's own cap, bytes */
  limitBytes: number;
}

/** none: no OOM kill; limit: the run passed its own cap; outside: the host or a parent ran short. */
export type MemoryKill = "none" | "limit" | "outside";

/**
 * How near its cap a run's peak may end and still count as the cap: what the kernel charges at once
 * (a huge page, a per-CPU batch) may fail with usage that much below it.
 */
export const CAP_MARGIN_BYTES = 4 << 20;

/**
 * The run's own counters tell the kinds apart: the times its own cap refused memory (v1
 * memory.failcnt and memory.memsw.failcnt; v2 memory.events `max` and `oom`, this cgroup's cap only),
 * and its peak against its cap (v1 memory.max_usage_in_bytes and memory.memsw.max_usage_in_bytes; v2
 * memory.peak). Both are needed: a v1 kernel may not count failures of the memory+swap cap (6.x
 * counts them on the memory counter only), while its peak then sits at the cap.
 */
export function memoryKillOf(counters: MemoryCounters): MemoryKill {
  if (counters.oomKills === 0) return "none";
  if (counters.limitHits > 0) return "limit";
  if (counters.peakBytes !== null && counters.peakBytes >= counters.limitBytes - CAP_MARGIN_BYTES)
    return "limit";
  return "outside";
}

/** A kill that was not the run's own cap, in words for the sandbox's error. */
export function outsideKillMessage(counters: MemoryCounters): string {
  const mib = (bytes: number) => Math.round(bytes / (1 << 20));
  const peak = counters.peakBytes === null ? "" : ` at ${mib(counters.peakBytes)} MiB,`;
  return (
    `the machine ran out of memory, not the program: the kernel's OOM killer ended the run${peak} ` +
    `below its own limit of ${mib(counters.limitBytes)} MiB (the host or a cgroup above the sandbox was short ` +
    "of memory). This says nothing about the program; run it again, or give the sandbox's machine more memory."
  );
}

/** A file's text, or null where it cannot be read (gone, or a cgroup file this kernel does not keep). */
export function readIfThere(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

/** The value of `key N` in a flat-keyed cgroup file (memory.events, pids.events, memory.oom_control). */
export function counterIn(text: string | null, key: string): number {
  return Number(new RegExp(`^${key} (\\d+)$`, "m").exec(text ?? "")?.[1] ?? 0);
}

/** A byte count a cgroup file holds, or null where it is missing or zero. */
export function bytesIn(dir: string, file: string): number | null {
  const bytes = Number(readIfThere(join(dir, file)));
  return Number.isFinite(bytes) && bytes > 0 ? bytes : null;
}

/** A v1 run's memory counters (`swap`: the kernel accounts memory+swap, memory.memsw.*). */
export function v1MemoryCounters(dir: string, limitBytes: number, swap: boolean): MemoryCounters {
  const failures = (file: string) => Number(readIfThere(join(dir, file))) || 0;
  const peaks = [
    bytesIn(dir, "memory.max_usage_in_bytes"),
    swap ? bytesIn(dir, "memory.memsw.max_usage_in_bytes") : null,
  ];
  const known = peaks.filter((peak): peak is number => peak !== null);
  return {
    oomKills: counterIn(readIfThere(join(dir, "memory.oom_control")), "oom_kill"),
    limitHits: failures("memory.failcnt") + (swap ? failures("memory.memsw.failcnt") : 0),
    peakBytes: known.length > 0 ? Math.max(...known) : null,
    limitBytes,
  };
}

/** A v2 run's memory counters. */
export function v2MemoryCounters(dir: string, limitBytes: number): MemoryCounters {
  const events = readIfThere(join(dir, "memory.events"));
  return {
    oomKills: counterIn(events, "oom_kill"),
    limitHits: counterIn(events, "max") + counterIn(events, "oom"),
    peakBytes: bytesIn(dir, "memory.peak"),
    limitBytes,
  };
}
