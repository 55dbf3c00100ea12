// Who ended a run the OOM killer ended, from the counters a run cgroup keeps: its own cap (the
// program's fault), or the host's or a parent cgroup's shortage (the machine's). The counter files
// are read as the kernel writes them (v1 and v2), and the verdict follows from their values.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  CAP_MARGIN_BYTES,
  type MemoryCounters,
  memoryKillOf,
  outsideKillMessage,
  v1MemoryCounters,
  v2MemoryCounters,
} from "../../pipeline/sandbox/memory-kill.js";
import { tempDir } from "../support/temp-dir.js";

const MIB = 1 << 20;
const counters = (values: Partial<MemoryCounters>): MemoryCounters => ({
  oomKills: 1,
  limitHits: 0,
  peakBytes: null,
  limitBytes: 512 * MIB,
  ...values,
});

describe("memoryKillOf", () => {
  it("is none without an OOM kill, whatever else the counters say", () => {
    expect(memoryKillOf(counters({ oomKills: 0, limitHits: 5, peakBytes: 512 * MIB }))).toBe("none");
  });

  it("is the run's own cap when its cap refused memory", () => {
    expect(memoryKillOf(counters({ limitHits: 144, peakBytes: 100 * MIB }))).toBe("limit");
  });

  it("is the run's own cap when its peak reached the cap, though no refusal was counted", () => {
    expect(memoryKillOf(counters({ peakBytes: 512 * MIB }))).toBe("limit");
    expect(memoryKillOf(counters({ peakBytes: 512 * MIB - CAP_MARGIN_BYTES }))).toBe("limit");
  });

  it("is outside when the run neither hit its cap nor came near it", () => {
    expect(memoryKillOf(counters({ peakBytes: 64 * MIB }))).toBe("outside");
    expect(memoryKillOf(counters({ peakBytes: 512 * MIB - CAP_MARGIN_BYTES - 1 }))).toBe("outside");
    // no peak kept (v2 before 5.19): the cap's own events decide
    expect(memoryKillOf(counters({ peakBytes: null }))).toBe("outside");
  });

  it("says in its message that the program is not to blame, with the peak and the cap", () => {
    const message = outsideKillMessage(counters({ peakBytes: 64 * MIB }));
    expect(message).toMatch(/ran out of memory, not the program/);
    expect(message).toContain("at 64 MiB");
    expect(message).toContain("limit of 512 MiB");
  });
});

describe("reading a run cgroup's counters", () => {
  it("v1: memory.oom_control's oom_kill, failcnt of memory and memory+swap, the larger peak", () => {
    const dir = tempDir();
    const run = join(dir, "run-0");
    mkdirSync(run);
    writeFileSync(join(run, "memory.oom_control"), "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n");
    writeFileSync(join(run, "memory.failcnt"), "0\n");
    writeFileSync(join(run, "memory.memsw.failcnt"), "3\n");
    writeFileSync(join(run, "memory.max_usage_in_bytes"), `${60 * MIB}\n`);
    writeFileSync(join(run, "memory.memsw.max_usage_in_bytes"), `${64 * MIB}\n`);
    expect(v1MemoryCounters(run, 64 * MIB, true)).toEqual({
      oomKills: 2,
      limitHits: 3,
      peakBytes: 64 * MIB,
      limitBytes: 64 * MIB,
    });
    // without swap accounting the memsw files are not the run's
    expect(v1MemoryCounters(run, 64 * MIB, false)).toMatchObject({ limitHits: 0, peakBytes: 60 * MIB });
  });

  it("v2: memory.events' oom_kill, max and oom, and memory.peak where the kernel keeps it", () => {
    const dir = tempDir();
    writeFileSync(join(dir, "memory.events"), "low 0\nhigh 0\nmax 0\noom 0\noom_kill 1\noom_group_kill 0\n");
    expect(v2MemoryCounters(dir, 256 * MIB)).toEqual({
      oomKills: 1,
      limitHits: 0,
      peakBytes: null,
      limitBytes: 256 * MIB,
    });
    writeFileSync(join(dir, "memory.events"), "low 0\nhigh 0\nmax 7\noom 1\noom_kill 1\noom_group_kill 0\n");
    writeFileSync(join(dir, "memory.peak"), `${256 * MIB}\n`);
    expect(v2MemoryCounters(dir, 256 * MIB)).toMatchObject({ limitHits: 8, peakBytes: 256 * MIB });
  });
});
