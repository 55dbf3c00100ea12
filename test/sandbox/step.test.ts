// A step whose prepared sandbox the OOM killer took while it waited for its orders ran nothing, so it
// builds a sandbox of its own and runs there instead of failing the request; a run that took its
// orders and was killed from outside is the sandbox's fault. The prepared sandbox and its cgroup are
// stand-ins with the kernel's counters; the sandbox built instead is real (isolation none).
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { RunCgroup } from "../../pipeline/sandbox/cgroup.js";
import type { HostProcess } from "../../pipeline/sandbox/command.js";
import { SandboxFaultError } from "../../pipeline/sandbox/errors.js";
import type { MemoryCounters } from "../../pipeline/sandbox/memory-kill.js";
import type { PreparedSandbox } from "../../pipeline/sandbox/prepared.js";
import { runStep, type StepHost, type StepPlan } from "../../pipeline/sandbox/step.js";
import { tempDir } from "../support/temp-dir.js";

/** what a run cgroup reads after the host's shortage killed its process, far below its own cap */
const killedFromOutside: MemoryCounters = {
  oomKills: 1,
  limitHits: 0,
  peakBytes: 4 << 20,
  limitBytes: 1 << 30,
};

function preparedKilled(tookOrders: boolean): PreparedSandbox {
  const cgroup = {
    procsFiles: [],
    setMemoryLimit: () => {},
    peakMemoryKb: () => 4096,
    memoryCounters: () => killedFromOutside,
    processLimitHit: () => false,
    remove: async () => {},
  } as unknown as RunCgroup;
  const process = {
    tookOrders,
    run: async () => ({
      result: { status: "Finished", execution_time: 0, return_code: null, stdout: "", stderr: "" },
      killedBy: null,
    }),
    kill: () => {},
    settled: async () => {},
    // killed: its launcher never wrote a report
    usageReport: () => null,
  } as unknown as HostProcess;
  return { process, cgroup };
}

function setUp(tookOrders: boolean): { host: StepHost; plan: StepPlan } {
  const dir = tempDir("cf-step-");
  const host: StepHost = {
    mode: "none",
    slot: {
      index: 0,
      uid: process.getuid?.() ?? 0,
      runsDir: dir,
      usageFile: join(dir, "usage"),
      mounted: false,
    },
    kit: { etcDir: dir, launcher: null, seccompFile: null, toolBinds: [], enter: null, spawner: null },
    cgroups: null,
  };
  const plan: StepPlan = {
    argv: ["/bin/echo", "built"],
    env: { PATH: "/usr/bin:/bin" },
    workDir: dir,
    hostTmpDir: dir,
    timeoutSeconds: 10,
    stdin: null,
    limits: { cpuSeconds: 10, addressSpaceMb: null, processes: 64, fileSizeMb: 16, openFiles: 64 },
    treeMemoryMb: 512,
    tmpMb: 16,
    maxOutputBytes: 1 << 16,
    killOutputBytes: 1 << 20,
    prepared: preparedKilled(tookOrders),
  };
  return { host, plan };
}

describe("a step whose prepared sandbox the host's memory shortage killed", () => {
  it("builds a sandbox of its own when the prepared one died before its orders, and runs the command there", async () => {
    const { host, plan } = setUp(false);
    const result = await runStep(host, plan);
    expect(result.stdout).toBe("built\n");
    expect(result.stopped_by).toBeUndefined();
  });

  it("is the sandbox's fault, not a verdict, when the killed sandbox had taken its orders", async () => {
    const { host, plan } = setUp(true);
    await expect(runStep(host, plan)).rejects.toBeInstanceOf(SandboxFaultError);
  });
});
