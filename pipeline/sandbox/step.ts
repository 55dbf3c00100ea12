// One step of a request (its compile or its run): a fresh bubblewrap sandbox around the command
// (prepared ahead, or built now), in fresh cgroups of its own where the machine has them, run to
// completion, then everything it left killed and removed. The result says what happened in
// SandboxFusion's terms, `stopped_by` included. An OOM kill that was not the run's own cap
// (memory-kill.ts) is no result at all: SandboxFaultError.
import { writeFileSync } from "node:fs";
import type { CgroupHost, RunCgroup } from "./cgroup.js";
import { type CommandOptions, type CommandOutcome, HostProcess } from "./command.js";
import { SandboxFaultError } from "./errors.js";
import { networkRefusalsOf, peakMemoryKbOf, type SlotArea } from "./host-area.js";
import {
  enterCgroups,
  type HostCommand,
  type IsolationMode,
  type ProcessLimits,
  prepareOrders,
  runUnisolated,
  type SandboxedCommand,
  type SandboxKit,
  wrapInSandbox,
} from "./isolation.js";
import { memoryKillOf, outsideKillMessage, readIfThere } from "./memory-kill.js";
import { disposeSandbox, type PreparedSandbox } from "./prepared.js";
import type { CommandRunResult, SandboxStop } from "./types.js";

const MIB = 1024 * 1024;

export interface StepHost {
  mode: IsolationMode;
  slot: SlotArea;
  kit: SandboxKit;
  /** null: no cgroups here, rlimits only */
  cgroups: CgroupHost | null;
}

export interface StepPlan extends CommandOptions {
  argv: string[];
  env: Record<string, string>;
  /** host dir mounted at the work dir */
  workDir: string;
  /** host scratch dir for TMPDIR in `isolation: none` */
  hostTmpDir: string | null;
  limits: ProcessLimits;
  /** what the whole process tree may hold (with cgroups), MiB */
  treeMemoryMb: number;
  tmpMb: number;
  /** a sandbox prepared around `workDir` to run the command in, instead of building one now */
  prepared?: PreparedSandbox;
  /** called once the command has started (to prepare what comes next meanwhile) */
  afterStart?: () => void;
}

/** Where a step runs: the usage report and cgroup to read afterwards, and how to start it. */
interface StepRun {
  cgroup: RunCgroup | null;
  /** the launcher's usage report once the run ended: peak memory (the cgroup's figure is preferred)
   * and refused packets; null where there is none */
  usage(): string | null;
  /** the run has a network namespace of its own, so the refused packets it counts are its own */
  isolated: boolean;
  /** whether the command was given to it (a prepared sandbox may die idle, before its orders) */
  ran(): boolean;
  start(options: CommandOptions): Promise<CommandOutcome>;
  dispose(): Promise<void>;
}

export async function runStep(host: StepHost, plan: StepPlan): Promise<CommandRunResult> {
  if (plan.prepared) {
    const result = await runOnce(plan, preparedRun(plan.prepared, plan));
    // a prepared sandbox that died before it read its orders ran nothing: build one now instead
    // (afterStart, called once, was called for it)
    if (plan.prepared.process.tookOrders || result.status === "TimeLimitExceeded") return result;
    return runOnce({ ...plan, afterStart: undefined }, builtRun(host, plan));
  }
  return runOnce(plan, builtRun(host, plan));
}

async function runOnce(plan: StepPlan, run: StepRun): Promise<CommandRunResult> {
  try {
    run.cgroup?.setMemoryLimit(plan.treeMemoryMb * MIB);
    const started = run.start(plan);
    plan.afterStart?.();
    const { result, killedBy } = await started;
    if (result.status !== "Error") {
      // the cgroup's figure covers the whole tree and is out of the program's reach
      const usage = run.usage();
      result.peak_memory_kb = run.cgroup?.peakMemoryKb() ?? (usage !== null ? peakMemoryKbOf(usage) : null);
      const memory = run.cgroup?.memoryCounters();
      const memoryKill = memory ? memoryKillOf(memory) : "none";
      // the host or a parent cgroup ran short and took the run: says nothing about the program (a
      // prepared sandbox killed idle, the likeliest victim, ran nothing: runStep builds another)
      if (memory && memoryKill === "outside" && run.ran())
        throw new SandboxFaultError(outsideKillMessage(memory));
      // what the limits refused, read from the kernel's counters: the program may have hidden it
      const stopped: SandboxStop[] = [];
      if (killedBy === "output") stopped.push("output");
      else if (memoryKill === "limit") stopped.push("memory");
      if (run.cgroup?.processLimitHit()) stopped.push("processes");
      if (run.isolated && usage !== null && (networkRefusalsOf(usage) ?? 0) > 0) stopped.push("network");
      if (stopped.length > 0) result.stopped_by = stopped;
    }
    return result;
  } finally {
    await run.dispose();
  }
}

function preparedRun(sandbox: PreparedSandbox, plan: StepPlan): StepRun {
  return {
    cgroup: sandbox.cgroup,
    // the launcher reports on the sandbox's status pipe, after the program (no usage file)
    usage: () => sandbox.process.usageReport(),
    isolated: true,
    ran: () => sandbox.process.tookOrders,
    start: (options) => sandbox.process.run(options, prepareOrders(plan)),
    dispose: () => disposeSandbox(sandbox),
  };
}

function builtRun(host: StepHost, plan: StepPlan): StepRun {
  const { mode, slot, kit } = host;
  // isolated with our launcher: it reports usage on a pipe (no file the program could write to)
  const onPipe = mode !== "none" && kit.launcher !== null;
  const usageFile = onPipe ? null : slot.usageFile;
  const command: SandboxedCommand = {
    argv: plan.argv,
    env: plan.env,
    limits: plan.limits,
    hostWorkDir: plan.workDir,
    hostUsageFile: usageFile,
    tmpMb: plan.tmpMb,
    uid: slot.uid,
    // only the tools this command names (Go's cache is named by GOCACHE): fewer mounts per run
    readOnlyBinds: kit.toolBinds.filter(([, inside]) =>
      [...plan.argv, ...Object.values(plan.env)].some(
        (value) => value === inside || value.startsWith(`${inside}/`),
      ),
    ),
  };
  let wrapped: HostCommand =
    mode === "none" ? runUnisolated(command, plan.hostTmpDir, kit) : wrapInSandbox(mode, command, kit);
  let cgroup: RunCgroup | null = null;
  if (host.cgroups) {
    cgroup = host.cgroups.createRun({
      memoryBytes: plan.treeMemoryMb * MIB,
      // the tree's cap binds before the uid's RLIMIT_NPROC (it also counts our wrappers), so a fork
      // refused at the limit is counted in pids.events and the run reports it (`stopped_by`)
      processes: plan.limits.processes,
    });
    wrapped = enterCgroups(wrapped, cgroup.procsFiles, kit);
  }
  // emptied, not removed: the file is the mount point of USAGE_PATH
  if (usageFile) writeFileSync(usageFile, "");
  let started: HostProcess | null = null;
  return {
    cgroup,
    usage: () => (usageFile ? (readIfThere(usageFile) ?? "") : (started?.usageReport() ?? null)),
    isolated: mode !== "none",
    ran: () => true,
    start: (options) => {
      started = HostProcess.spawn(wrapped);
      return started.run(options);
    },
    dispose: async () => {
      await cgroup?.remove();
    },
  };
}
