// Run cgroups: every sandboxed command runs in a fresh memory + pids cgroup of its own, so a run's
// whole process tree holds one memory cap (resident, kernel, and its tmpfs files) and one process
// cap, and the OOM killer acts inside the run only (RLIMIT_AS alone is per process: 128 processes
// could each take the full limit). The cgroup's peak usage is also the run's peak memory, a figure
// the program cannot forge.
import { mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { processAlive } from "../pid.js";
import {
  bytesIn,
  counterIn as counter,
  type MemoryCounters,
  readIfThere as read,
  v1MemoryCounters,
  v2MemoryCounters,
} from "./memory-kill.js";

export interface CgroupLimits {
  memoryBytes: number;
  processes: number;
}

/** The cgroups of one sandboxed command. */
export interface RunCgroup {
  /** cgroup.procs files the command's first process writes itself into */
  procsFiles: string[];
  /** changes the memory cap (a sandbox prepared ahead learns its request's limit late) */
  setMemoryLimit(bytes: number): void;
  /** peak memory of the whole tree in KiB, or null where the kernel does not keep it */
  peakMemoryKb(): number | null;
  /** what the kernel counted of the run's memory: OOM kills, its cap's refusals, its peak (memory-kill.ts) */
  memoryCounters(): MemoryCounters;
  /** whether a fork or clone of the run was refused at the process cap */
  processLimitHit(): boolean;
  /** kills whatever is left in the cgroups and removes them */
  remove(): Promise<void>;
}

export interface CgroupHost {
  version: 1 | 2;
  createRun(limits: CgroupLimits): RunCgroup;
  close(): Promise<void>;
}

const BASE_PREFIX = "codefeedback-sandbox-";

let instances = 0;

interface Mount {
  root: string;
  mountPoint: string;
  fsType: string;
  superOptions: string[];
}

function mounts(): Mount[] {
  return readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .filter((line) => line.includes(" - "))
    .map((line) => {
      const [left, right] = line.split(" - ") as [string, string];
      const fields = left.split(" ");
      const [fsType, , superOptions] = right.split(" ");
      const unescapeOctal = (path: string) =>
        path.replace(/\\(\d{3})/g, (_, octal) => String.fromCharCode(parseInt(octal, 8)));
      return {
        root: unescapeOctal(fields[3] ?? "/"),
        mountPoint: unescapeOctal(fields[4] ?? ""),
        fsType: fsType ?? "",
        superOptions: (superOptions ?? "").split(","),
      };
    });
}

/** hierarchy key ("memory", "pids", or "" for v2) -> this process's cgroup path in it */
function ownCgroups(): Map<string, string> {
  const own = new Map<string, string>();
  for (const line of readFileSync("/proc/self/cgroup", "utf8").split("\n")) {
    const match = /^\d+:([^:]*):(.*)$/.exec(line);
    if (!match) continue;
    for (const controller of match[1]!.split(",")) own.set(controller, match[2]!);
  }
  return own;
}

/** The host dir of our own cgroup in the hierarchy mounted at `mount`. */
function ownDir(mount: Mount, ownPath: string): string {
  const relative = ownPath.startsWith(mount.root) ? ownPath.slice(mount.root.length) : ownPath;
  return join(mount.mountPoint, relative);
}

/** Pids still in a cgroup dir (and its children), killed with SIGKILL. */
function killMembers(dir: string): number {
  let found = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) found += killMembers(join(dir, entry.name));
  }
  for (const pid of (read(join(dir, "cgroup.procs")) ?? "").split("\n").filter(Boolean)) {
    found++;
    try {
      process.kill(Number(pid), "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/**
 * Removes a cgroup dir, its children first; false when it stays (a member will not die). A run's
 * cgroup usually holds nothing by now, so it is removed at once; while it is busy, its members are
 * waited for (and killed), and a child dir is removed first (a busy dir without members has one).
 */
async function removeCgroupDir(dir: string): Promise<boolean> {
  for (let attempt = 0; attempt < 16; attempt++) {
    try {
      rmdirSync(dir);
      return true;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return true;
      if (code !== "EBUSY") return false;
    }
    if ((read(join(dir, "cgroup.procs")) ?? "").trim() === "") {
      try {
        for (const entry of readdirSync(dir, { withFileTypes: true })) {
          if (entry.isDirectory()) await removeCgroupDir(join(dir, entry.name));
        }
      } catch {
        // gone meanwhile: the next rmdir says so
      }
      continue;
    }
    // bwrap exits as soon as the program does, while its init may still be on its way out; anything
    // else left (a daemon of `isolation: none`) is killed
    if (attempt > 0) killMembers(dir);
    await new Promise((resolve) => setTimeout(resolve, Math.min(2 ** attempt, 500)));
  }
  return false;
}

/** Removes base dirs left in `parent` by sandboxes whose process died without closing them. */
async function removeStaleBases(parent: string): Promise<void> {
  let entries: string[] = [];
  try {
    entries = readdirSync(parent);
  } catch {
    return;
  }
  for (const entry of entries) {
    const owner = new RegExp(`^${BASE_PREFIX}(\\d+)-`).exec(entry);
    if (owner && !processAlive(Number(owner[1]))) await removeCgroupDir(join(parent, entry));
  }
}

/** cgroup v1: the memory and pids hierarchies, nested under this process's own cgroups. */
class CgroupV1Host implements CgroupHost {
  readonly version = 1;
  private runs = 0;
  /** whether the kernel accounts swap (memory.memsw.*), read from the first run's dir */
  private swapAccounted: boolean | undefined;
  constructor(
    private readonly memoryBase: string,
    private readonly pidsBase: string,
  ) {}

  createRun(limits: CgroupLimits): RunCgroup {
    const name = `run-${this.runs++}`;
    const memory = join(this.memoryBase, name);
    const pids = join(this.pidsBase, name);
    mkdirSync(memory);
    mkdirSync(pids);
    const memoryLimit = join(memory, "memory.limit_in_bytes");
    // swap counts too, where the kernel accounts it, so a run cannot spill past its cap into swap
    const swapLimit = join(memory, "memory.memsw.limit_in_bytes");
    this.swapAccounted ??= read(swapLimit) !== null;
    const swapAccounted = this.swapAccounted;
    /** the cap this dir has: none when it was made; only ever changed here */
    let current = Number.POSITIVE_INFINITY;
    const setMemoryLimit = (bytes: number) => {
      if (bytes === current) return;
      // memory + swap may never be below memory alone, so the order depends on the direction
      const raising = current < bytes;
      if (swapAccounted && raising) writeFileSync(swapLimit, String(bytes));
      writeFileSync(memoryLimit, String(bytes));
      if (swapAccounted && !raising) writeFileSync(swapLimit, String(bytes));
      current = bytes;
    };
    setMemoryLimit(limits.memoryBytes);
    writeFileSync(join(pids, "pids.max"), String(limits.processes));
    return {
      procsFiles: [join(memory, "cgroup.procs"), join(pids, "cgroup.procs")],
      setMemoryLimit,
      peakMemoryKb: () => kib(bytesIn(memory, "memory.max_usage_in_bytes")),
      memoryCounters: () => v1MemoryCounters(memory, current, swapAccounted),
      processLimitHit: () => counter(read(join(pids, "pids.events")), "max") > 0,
      remove: async () => {
        await removeCgroupDir(memory);
        await removeCgroupDir(pids);
      },
    };
  }

  async close(): Promise<void> {
    await removeCgroupDir(this.memoryBase);
    await removeCgroupDir(this.pidsBase);
  }
}

/**
 * cgroup v2: controllers can only be handed to children of a cgroup that holds no processes itself,
 * so we nest under `sandbox.cgroup_parent` when set, else under our own cgroup or the hierarchy's
 * root, whichever lets us enable memory and pids for children.
 */
class CgroupV2Host implements CgroupHost {
  readonly version = 2;
  private runs = 0;
  constructor(private readonly base: string) {}

  createRun(limits: CgroupLimits): RunCgroup {
    const dir = join(this.base, `run-${this.runs++}`);
    mkdirSync(dir);
    writeFileSync(join(dir, "memory.max"), String(limits.memoryBytes));
    try {
      writeFileSync(join(dir, "memory.swap.max"), "0");
    } catch {
      // no swap controller
    }
    writeFileSync(join(dir, "pids.max"), String(limits.processes));
    let current = limits.memoryBytes;
    return {
      procsFiles: [join(dir, "cgroup.procs")],
      setMemoryLimit: (bytes) => {
        if (bytes === current) return;
        writeFileSync(join(dir, "memory.max"), String(bytes));
        current = bytes;
      },
      peakMemoryKb: () => kib(bytesIn(dir, "memory.peak")),
      memoryCounters: () => v2MemoryCounters(dir, current),
      processLimitHit: () => counter(read(join(dir, "pids.events")), "max") > 0,
      remove: async () => {
        try {
          writeFileSync(join(dir, "cgroup.kill"), "1");
        } catch {
          // kernels before 5.14: removeCgroupDir kills one by one
        }
        await removeCgroupDir(dir);
      },
    };
  }

  async close(): Promise<void> {
    await removeCgroupDir(this.base);
  }
}

function kib(bytes: number | null): number | null {
  return bytes === null ? null : Math.round(bytes / 1024);
}

/** Makes `dir`, then `then()`; takes `dir` away again should that fail. */
function mkdirThen(dir: string, then: () => void): void {
  mkdirSync(dir);
  try {
    then();
  } catch (error) {
    rmdirSync(dir);
    throw error;
  }
}

function newBaseName(): string {
  return `${BASE_PREFIX}${process.pid}-${instances++}`;
}

async function openV1(all: Mount[], own: Map<string, string>): Promise<CgroupHost> {
  const dirs: string[] = [];
  for (const controller of ["memory", "pids"]) {
    const mount = all.find((m) => m.fsType === "cgroup" && m.superOptions.includes(controller));
    const path = own.get(controller);
    if (!mount || path === undefined) throw new Error(`no cgroup v1 ${controller} hierarchy is mounted`);
    const parent = ownDir(mount, path);
    await removeStaleBases(parent);
    dirs.push(join(parent, newBaseName()));
  }
  const [memoryBase, pidsBase] = dirs as [string, string];
  mkdirThen(memoryBase, () => mkdirSync(pidsBase));
  return new CgroupV1Host(memoryBase, pidsBase);
}

function enableControllers(dir: string): void {
  const available = (read(join(dir, "cgroup.controllers")) ?? "").split(/\s+/);
  for (const controller of ["memory", "pids"]) {
    if (!available.includes(controller))
      throw new Error(`${dir} does not offer the ${controller} controller`);
  }
  writeFileSync(join(dir, "cgroup.subtree_control"), "+memory +pids");
}

async function openV2(mount: Mount, own: Map<string, string>, parent?: string): Promise<CgroupHost> {
  const candidates = parent
    ? [parent]
    : [ownDir(mount, own.get("") ?? "/"), mount.mountPoint].filter((dir, i, all) => all.indexOf(dir) === i);
  const problems: string[] = [];
  for (const candidate of candidates) {
    try {
      // fails (EBUSY) where the candidate holds processes itself: v2 forbids controllers there
      enableControllers(candidate);
      await removeStaleBases(candidate);
      const base = join(candidate, newBaseName());
      mkdirThen(base, () => enableControllers(base));
      return new CgroupV2Host(base);
    } catch (error) {
      problems.push(`${candidate}: ${(error as Error).message}`);
    }
  }
  throw new Error(
    `cannot enable the memory and pids controllers for children of ${problems.join("; ")}. Set sandbox.cgroup_parent to a cgroup v2 dir without processes of its own (e.g. mkdir /sys/fs/cgroup/codefeedback)`,
  );
}

/**
 * This sandbox's cgroups, or why there are none. Needs root (or a delegated cgroup); callers fall
 * back to rlimits alone when it fails, and say why (`sandbox languages`).
 */
export async function openCgroupHost(
  parent?: string,
): Promise<{ host: CgroupHost; problem: null } | { host: null; problem: string }> {
  if (process.getuid?.() !== 0 && !parent) {
    return { host: null, problem: "not root (set sandbox.cgroup_parent to a cgroup delegated to this user)" };
  }
  try {
    const all = mounts();
    const own = ownCgroups();
    const v2 = all.find(
      (m) => m.fsType === "cgroup2" && (read(join(m.mountPoint, "cgroup.controllers")) ?? "").trim(),
    );
    const host =
      v2 && !all.some((m) => m.fsType === "cgroup" && m.superOptions.includes("memory"))
        ? await openV2(v2, own, parent)
        : await openV1(all, own);
    return { host, problem: null };
  } catch (error) {
    return { host: null, problem: (error as Error).message };
  }
}
