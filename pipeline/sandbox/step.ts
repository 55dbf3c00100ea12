// One step of a request (its compile or its run): a fresh bubblewrap sandbox around the command, in
// fresh cgroups of its own where the machine has them, run to completion, then everything it left
// killed and removed. The result says what happened in SandboxFusion's terms; `killedFor` says why
// we (or the kernel, for memory) ended it, for the response's message.
import type { CgroupHost, RunCgroup } from "./cgroup.js";
import { runHostCommand } from "./command.js";
import { readPeakMemoryKb, resetUsage, type SlotArea } from "./host-area.js";
import {
  enterCgroups,
  type HostCommand,
  type IsolationMode,
  type ProcessLimits,
  runUnisolated,
  type SandboxedCommand,
  type SandboxKit,
  wrapInSandbox,
} from "./isolation.js";
import type { CommandRunResult } from "./types.js";

/** Processes of ours inside a run's cgroup besides the program's: bwrap, its init, the launcher (or time, setpriv, prlimit). */
const WRAPPER_PROCESSES = 4;
const MIB = 1024 * 1024;

export interface StepHost {
  mode: IsolationMode;
  slot: SlotArea;
  kit: SandboxKit;
  /** null: no cgroups here, rlimits only */
  cgroups: CgroupHost | null;
}

export interface StepPlan {
  argv: string[];
  env: Record<string, string>;
  /** host dir mounted at the work dir */
  workDir: string;
  /** host scratch dir for TMPDIR in `isolation: none` */
  hostTmpDir: string | null;
  timeoutSeconds: number;
  stdin: string | null;
  limits: ProcessLimits;
  /** what the whole process tree may hold (with cgroups), MiB */
  treeMemoryMb: number;
  tmpMb: number;
  maxOutputBytes: number;
  killOutputBytes: number;
  signal?: AbortSignal;
}

export type StepKill = "output" | "memory" | null;

export interface StepOutcome {
  result: CommandRunResult;
  killedFor: StepKill;
}

export async function runStep(host: StepHost, plan: StepPlan): Promise<StepOutcome> {
  const { mode, slot, kit } = host;
  const command: SandboxedCommand = {
    argv: plan.argv,
    env: plan.env,
    limits: plan.limits,
    hostWorkDir: plan.workDir,
    hostUsageFile: slot.usageFile,
    tmpMb: plan.tmpMb,
    uid: slot.uid,
    // only the tools this command names: fewer mounts per run
    readOnlyBinds: kit.toolBinds.filter(([, inside]) => plan.argv.includes(inside)),
  };
  let wrapped: HostCommand =
    mode === "none" ? runUnisolated(command, plan.hostTmpDir, kit) : wrapInSandbox(mode, command, kit);
  let cgroup: RunCgroup | null = null;
  if (host.cgroups) {
    cgroup = host.cgroups.createRun({
      memoryBytes: plan.treeMemoryMb * MIB,
      processes: plan.limits.processes + WRAPPER_PROCESSES,
    });
    wrapped = enterCgroups(wrapped, cgroup.procsFiles, kit);
  }
  try {
    resetUsage(slot);
    const outcome = await runHostCommand(wrapped, {
      stdin: plan.stdin,
      timeoutSeconds: plan.timeoutSeconds,
      maxOutputBytes: plan.maxOutputBytes,
      killOutputBytes: plan.killOutputBytes,
      ...(plan.signal ? { signal: plan.signal } : {}),
    });
    const result = outcome.result;
    let killedFor: StepKill = outcome.killedBy === "output" ? "output" : null;
    if (result.status !== "Error") {
      // the cgroup's figure covers the whole tree and is out of the program's reach
      result.peak_memory_kb = cgroup?.peakMemoryKb() ?? readPeakMemoryKb(slot);
      if (killedFor === null && cgroup?.oomKilled()) killedFor = "memory";
    }
    return { result, killedFor };
  } finally {
    await cgroup?.remove();
  }
}
