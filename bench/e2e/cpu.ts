// Where every CPU second of a stage went, read from the kernel around the stage's run: the machine's
// busy time (/proc/stat), the LLM and sandbox servers' own (/proc/PID/stat, with the spawner that forks
// for a process), and the programs the sandbox started, through a cpuacct cgroup around the process
// that starts them (the group's usage less that process's own). Linux only; the cgroup needs root and
// cgroup v1's cpuacct (this machine's kind), else the programs are left in "other".
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import path from "node:path";
import { isHelperBinary } from "../../pipeline/sandbox/launcher.js";

const TICKS_PER_S = (() => {
  const out = spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout?.trim();
  const ticks = Number(out);
  return ticks > 0 ? ticks : 100;
})();

/**
 * CPU seconds a live process has used itself (all its threads, not its children, but its sandbox
 * spawner: spawner.c forks the sandboxes on the process's behalf, and that work is the process's
 * own); 0 once it is gone.
 */
export function processCpuS(pid: number | undefined): number {
  if (pid === undefined) return 0;
  return threadsCpuS(pid) + spawnersOf(pid).reduce((sum, spawner) => sum + threadsCpuS(spawner), 0);
}

/** The children of `pid` that are our sandbox spawner (pipeline/sandbox/spawner.c). */
export function spawnersOf(pid: number): number[] {
  let children: number[];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8")
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
  return children.filter((child) => {
    try {
      return isHelperBinary("spawn", readFileSync(`/proc/${child}/cmdline`, "utf8").split("\0")[0]!);
    } catch {
      return false;
    }
  });
}

function threadsCpuS(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // the command name may hold spaces: the fields after it start two characters past its ')'
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // utime and stime are the 14th and 15th fields; fields[0] is the 3rd
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_S;
  } catch {
    return 0;
  }
}

/** The machine's busy CPU seconds since boot, all cores together (user, nice, system, irq, softirq, steal). */
export function machineBusyS(): number {
  const line = readFileSync("/proc/stat", "utf8").split("\n")[0]!;
  const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
  return (
    ((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0)) / TICKS_PER_S
  );
}

/** A cpuacct cgroup of the benchmark's: the CPU of the processes put in it and of all they fork. */
export class CpuGroup {
  private constructor(private readonly dir: string) {}

  /** A fresh group, or undefined where none can be made (not root, no cgroup v1 cpuacct). */
  static create(name: string): CpuGroup | undefined {
    const mount = readFileSync("/proc/self/mountinfo", "utf8")
      .split("\n")
      .map((line) => line.split(" "))
      .find(
        (f) =>
          f.includes("-") && f[f.indexOf("-") + 1] === "cgroup" && f.at(-1)!.split(",").includes("cpuacct"),
      );
    if (!mount) return undefined;
    const dir = path.join(mount[4]!, `bench-e2e-${process.pid}-${name}`);
    try {
      mkdirSync(dir);
      return new CpuGroup(dir);
    } catch {
      return undefined;
    }
  }

  /** Moves `pid` (and what it forks from now on) into the group. */
  add(pid: number | undefined): void {
    if (pid === undefined) return;
    try {
      writeFileSync(path.join(this.dir, "cgroup.procs"), String(pid));
    } catch {
      // gone already
    }
  }

  /** CPU seconds the group's processes have used, the ones that left it included. */
  usageS(): number {
    return Number(readFileSync(path.join(this.dir, "cpuacct.usage"), "utf8")) / 1e9;
  }

  /** Moves `pid` back to the top of the hierarchy (where it was), out of the group. */
  leave(pid: number): void {
    try {
      writeFileSync(path.join(path.dirname(this.dir), "cgroup.procs"), String(pid));
    } catch {
      // gone already
    }
  }

  /**
   * Removes the group once its processes are gone: a spawner or sandbox of the group's process may
   * take a moment to exit after it is closed. One still there after 5 s keeps the group (harmless).
   */
  async remove(): Promise<void> {
    for (let waited = 0; waited < 5000; waited += 50) {
      try {
        rmdirSync(this.dir);
        return;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  }
}

/** Where the CPU went while one stage ran, seconds. */
export interface CpuShares {
  /** the stage's own process(es), start-up included */
  stageS: number;
  llmServerS: number;
  /** the sandbox server process itself (0 without --sandbox-server) */
  sandboxServerS: number;
  /** the sandboxes it started: wrappers, toolchains and programs; undefined where not measured */
  programsS: number | undefined;
  /** everything else busy on the machine meanwhile */
  otherS: number;
  /** the cores' capacity over the stage's wall time */
  capacityS: number;
}

export interface CpuProbe {
  machine: number;
  llm: number;
  sandboxServer: number;
  groups: number;
  at: number;
}

/** What the benchmark can read: the servers' pids and the groups the sandboxes run in. */
export class CpuMeter {
  constructor(
    private readonly pids: { llm: number | undefined; sandboxServer: number | undefined },
    /** the sandbox server's group, where there is one */
    private readonly serverGroup: CpuGroup | undefined,
  ) {}

  probe(stageGroup?: CpuGroup): CpuProbe {
    return {
      machine: machineBusyS(),
      llm: processCpuS(this.pids.llm),
      sandboxServer: processCpuS(this.pids.sandboxServer),
      groups: (this.serverGroup?.usageS() ?? 0) + (stageGroup?.usageS() ?? 0),
      at: performance.now(),
    };
  }

  /**
   * The shares between two probes; `stageS` is the stage's CPU as its processes counted it, and
   * `stageGroup` the group it ran in (the embedded sandbox's programs are the stage's children).
   */
  shares(before: CpuProbe, after: CpuProbe, stageS: number, stageGroup?: CpuGroup): CpuShares {
    const llmServerS = after.llm - before.llm;
    const sandboxServerS = after.sandboxServer - before.sandboxServer;
    // a group holds its own process too: the server's (or the stage's) own CPU is taken off
    const grouped = after.groups - before.groups;
    const programsS =
      this.serverGroup || stageGroup
        ? Math.max(0, grouped - (this.serverGroup ? sandboxServerS : 0) - (stageGroup ? stageS : 0))
        : undefined;
    const busy = after.machine - before.machine;
    return {
      stageS,
      llmServerS,
      sandboxServerS,
      programsS,
      otherS: Math.max(0, busy - stageS - llmServerS - sandboxServerS - (programsS ?? 0)),
      capacityS: (cpus().length * (after.at - before.at)) / 1000,
    };
  }
}
