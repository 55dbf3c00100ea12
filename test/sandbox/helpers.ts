// Shared set-up of the sandbox tests: a config with small limits so hostile programs hit them fast,
// and a look at the host's process table to prove nothing a run started outlives it.
import { readdirSync, readFileSync } from "node:fs";
import {
  EmbeddedSandbox,
  type IsolationReport,
  type SandboxConfig,
  sandboxConfigSchema,
} from "../../pipeline/sandbox/index.js";
import { isHelperBinary } from "../../pipeline/sandbox/launcher.js";
import { present } from "../support/required.js";

export function testConfig(overrides: Record<string, unknown> = {}): SandboxConfig {
  return sandboxConfigSchema.parse({
    workers: 2,
    queue: 1000,
    run_timeout_s: 10,
    compile_timeout_s: 60,
    max_output_bytes: 64 * 1024,
    kill_output_bytes: 4 * 1024 * 1024,
    limits: { memory_mb: 256, processes: 64, file_size_mb: 8, work_dir_mb: 32, tmp_mb: 16 },
    ...overrides,
  });
}

/**
 * Python lines (`os` and `time` imported) that fork until the process cap refuses, up to 1000 children,
 * hide the refusal, then kill and reap the children: a program the sandbox must report as stopped.
 */
export const FORK_TO_THE_CAP = `children = []
try:
    for _ in range(1000):
        pid = os.fork()
        if pid == 0:
            time.sleep(600)  # until killed: a slow fork loop must still find its children there
            os._exit(0)
        children.append(pid)
except OSError:
    pass
for pid in children:
    os.kill(pid, 9)
    os.waitpid(pid, 0)`;

/** What isolation the embedded sandbox gets on this machine (none fails the file under CODEFEEDBACK_REQUIRE_SANDBOX=1). */
export async function probeIsolationReport(): Promise<IsolationReport> {
  const sandbox = new EmbeddedSandbox(testConfig({ workers: 1 }));
  try {
    const report = await sandbox.isolation();
    present("SANDBOX", report.mode === null ? `no isolation: ${report.problem}` : undefined);
    return report;
  } finally {
    await sandbox.close();
  }
}

/** Which isolation mode the embedded sandbox gets here (null: it refuses to run code). */
export async function probeIsolationMode(): Promise<string | null> {
  return (await probeIsolationReport()).mode;
}

export const RUNNING_AS_ROOT = process.getuid?.() === 0;

export function parentOf(pid: string): string | null {
  try {
    return /^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? null;
  } catch {
    return null;
  }
}

/** Whether `pid` descends from this process (other test files run sandboxes of their own). */
export function descendsFromUs(pid: string): boolean {
  let current: string | null = pid;
  for (let depth = 0; current !== null && current !== "1" && depth < 64; depth++) {
    current = parentOf(current);
    if (current === String(process.pid)) return true;
  }
  return false;
}

/** Whether `pid` is this process, or the spawner process that forks sandboxes for it (spawner.c). */
function usOrOurSpawner(pid: string | null): boolean {
  if (pid === String(process.pid)) return true;
  if (pid === null || parentOf(pid) !== String(process.pid)) return false;
  try {
    return isHelperBinary("spawn", readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")[0]!);
  } catch {
    return false;
  }
}

/**
 * Whether `pid` belongs to a sandbox this process built ahead for a coming request: its ancestry
 * reaches a bwrap we started ourselves (or our spawner did) whose launcher waits for orders
 * (`--wait`). A process a run left behind cannot be one: when its sandbox ended it was reparented
 * outside our tree.
 */
function inPreparedSandbox(pid: string): boolean {
  let current: string | null = pid;
  for (let depth = 0; current !== null && current !== "1" && depth < 64; depth++) {
    const parent = parentOf(current);
    if (usOrOurSpawner(parent)) {
      try {
        return readFileSync(`/proc/${current}/cmdline`, "utf8").split("\0").includes("--wait");
      } catch {
        return false;
      }
    }
    current = parent;
  }
  return false;
}

/**
 * Live (non-zombie) host processes owned by any of `uids`, as "pid cmdline", leaving out the
 * sandboxes built ahead for the next requests.
 */
export function liveProcessesOf(uids: readonly number[], options: { prepared?: boolean } = {}): string[] {
  const found: string[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const status = readFileSync(`/proc/${entry}/status`, "utf8");
      const uid = Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]);
      const state = /^State:\s+(\S)/m.exec(status)?.[1];
      if (uids.includes(uid) && state !== "Z" && (options.prepared || !inPreparedSandbox(entry))) {
        const cmd = readFileSync(`/proc/${entry}/cmdline`, "utf8").replaceAll("\0", " ").trim();
        found.push(`${entry} ${cmd}`);
      }
    } catch {
      // the process ended while we looked
    }
  }
  return found;
}

/** /proc/PID/status of live host processes whose command line starts with `prefix`. */
export function processesNamed(prefix: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (!readFileSync(`/proc/${entry}/cmdline`, "utf8").startsWith(prefix)) continue;
      found.push(readFileSync(`/proc/${entry}/status`, "utf8"));
    } catch {
      // the process ended while we looked
    }
  }
  return found;
}

/** Waits (bounded, room for a loaded machine) until no live process of `uids` is left; returns what is still there. */
export async function waitForNoProcesses(
  uids: readonly number[],
  options: { prepared?: boolean } = {},
  maxWaitMs = 60_000,
): Promise<string[]> {
  const deadline = Date.now() + maxWaitMs;
  let left = liveProcessesOf(uids, options);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    left = liveProcessesOf(uids, options);
  }
  return left;
}
