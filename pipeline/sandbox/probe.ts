// Finds out, once per sandbox, which isolation works on this machine by running /usr/bin/true the way
// real runs will be wrapped (in run cgroups, when there are any): first with an unprivileged user
// namespace, then (as root) with bwrap as root and the launcher dropping privileges.
import { access, constants as fsConstants } from "node:fs/promises";
import type { CgroupHost } from "./cgroup.js";
import { GO_CACHE_INSIDE } from "./go-cache.js";
import { isRoot, type SlotArea } from "./host-area.js";
import { type IsolationMode, SANDBOX_TOOLS, type SandboxKit } from "./isolation.js";
import { prepareSandboxFor, type SupplyOptions } from "./prepared.js";
import { runStep, type StepHost, type StepPlan } from "./step.js";
import { RunDirectory } from "./workdir.js";

export interface IsolationProbe {
  mode: Exclude<IsolationMode, "none"> | null;
  /** why no mode works, with the errors seen */
  problem: string | null;
}

/** Runs /usr/bin/true in `dir` as `host` runs a step, with every tool mounted as for a Go run. */
async function runTrue(host: StepHost, dir: RunDirectory, extra: Pick<StepPlan, "prepared"> = {}) {
  return runStep(host, {
    argv: ["/usr/bin/true"],
    env: { PATH: "/usr/bin:/bin", GOCACHE: GO_CACHE_INSIDE },
    workDir: dir.work,
    hostTmpDir: null,
    timeoutSeconds: 20,
    stdin: null,
    limits: { cpuSeconds: 5, addressSpaceMb: null, processes: 64, fileSizeMb: 1, openFiles: 64 },
    treeMemoryMb: 256,
    tmpMb: 1,
    maxOutputBytes: 4096,
    killOutputBytes: 65536,
    ...extra,
  });
}

export async function probeIsolation(
  slot: SlotArea,
  kit: SandboxKit,
  cgroups: CgroupHost | null,
  only?: Exclude<IsolationMode, "none">,
): Promise<IsolationProbe> {
  const needed: [string, string][] = [[SANDBOX_TOOLS.bwrap, "bubblewrap"]];
  if (!kit.launcher) {
    needed.push([SANDBOX_TOOLS.time, "time"], [SANDBOX_TOOLS.prlimit, "util-linux"]);
    if (isRoot()) needed.push([SANDBOX_TOOLS.setpriv, "util-linux"]);
  }
  if (cgroups && !kit.enter) needed.push([SANDBOX_TOOLS.shell, "dash"]);
  for (const [path, debianPackage] of needed) {
    const found = await access(path, fsConstants.X_OK).then(
      () => true,
      () => false,
    );
    if (!found) return { mode: null, problem: `${path} is missing (Debian package ${debianPackage})` };
  }
  const tried: string[] = [];
  let modes: Exclude<IsolationMode, "none">[] = isRoot() ? ["userns", "setuid"] : ["userns"];
  if (only) modes = modes.filter((mode) => mode === only);
  if (modes.length === 0) return { mode: null, problem: `${only} isolation needs root` };
  for (const mode of modes) {
    const dir = RunDirectory.create(slot.runsDir, isRoot() ? slot.uid : null, { withTmp: false });
    try {
      const result = await runTrue({ mode, slot, kit, cgroups }, dir);
      if (result.status === "Finished" && result.return_code === 0) return { mode, problem: null };
      tried.push(`${mode}: ${(result.stderr ?? "").trim() || `exit code ${result.return_code}`}`);
    } finally {
      await dir.remove();
    }
  }
  return { mode: null, problem: tried.join("; ") };
}

/** Whether a sandbox prepared ahead (launcher --wait) runs /usr/bin/true once given its orders. */
export async function probePrepared(options: SupplyOptions): Promise<boolean> {
  const dir = RunDirectory.create(options.slot.runsDir, options.owner, { withTmp: false });
  try {
    const prepared = prepareSandboxFor(dir, options);
    const result = await runTrue(options, dir, { prepared });
    return result.status === "Finished" && result.return_code === 0;
  } catch {
    return false;
  } finally {
    await dir.remove();
  }
}
