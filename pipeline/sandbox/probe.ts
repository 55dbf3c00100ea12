// Finds out, once per sandbox, which isolation works on this machine by running /usr/bin/true the way
// real runs will be wrapped (in run cgroups, when there are any): first with an unprivileged user
// namespace, then (as root) with bwrap as root and the launcher dropping privileges.
import { access, constants as fsConstants } from "node:fs/promises";
import type { CgroupHost } from "./cgroup.js";
import { runHostCommand } from "./command.js";
import { isRoot, type SlotArea } from "./host-area.js";
import {
  enterCgroups,
  type IsolationMode,
  SANDBOX_TOOLS,
  type SandboxKit,
  wrapInSandbox,
} from "./isolation.js";
import { prepareSandboxFor, type SupplyOptions } from "./prepared.js";
import { runStep } from "./step.js";
import { RunDirectory } from "./workdir.js";

export interface IsolationProbe {
  mode: Exclude<IsolationMode, "none"> | null;
  /** why no mode works, with the errors seen */
  problem: string | null;
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
    const cgroup = cgroups?.createRun({ memoryBytes: 256 * 1024 * 1024, processes: 64 });
    try {
      let host = wrapInSandbox(
        mode,
        {
          argv: ["/usr/bin/true"],
          env: { PATH: "/usr/bin:/bin" },
          limits: { cpuSeconds: 5, addressSpaceMb: null, processes: 64, fileSizeMb: 1, openFiles: 64 },
          hostWorkDir: dir.work,
          hostUsageFile: slot.usageFile,
          tmpMb: 1,
          uid: slot.uid,
          readOnlyBinds: kit.toolBinds,
        },
        kit,
      );
      if (cgroup) host = enterCgroups(host, cgroup.procsFiles, kit);
      const { result } = await runHostCommand(host, {
        stdin: null,
        timeoutSeconds: 20,
        maxOutputBytes: 4096,
        killOutputBytes: 65536,
      });
      if (result.status === "Finished" && result.return_code === 0) return { mode, problem: null };
      tried.push(`${mode}: ${(result.stderr ?? "").trim() || `exit code ${result.return_code}`}`);
    } finally {
      await cgroup?.remove();
      await dir.remove();
    }
  }
  return { mode: null, problem: tried.join("; ") };
}

/** Whether a sandbox prepared ahead (launcher --wait) runs /usr/bin/true once given its orders. */
export async function probePrepared(options: SupplyOptions): Promise<boolean> {
  const dir = RunDirectory.create(options.slot.runsDir, options.owner, { withTmp: false });
  try {
    const sandbox = prepareSandboxFor(dir, options);
    const { result } = await runStep(
      { mode: options.mode, slot: options.slot, kit: options.kit, cgroups: options.cgroups },
      {
        argv: ["/usr/bin/true"],
        env: { PATH: "/usr/bin:/bin" },
        workDir: dir.work,
        hostTmpDir: null,
        timeoutSeconds: 20,
        stdin: null,
        limits: { cpuSeconds: 5, addressSpaceMb: null, processes: 64, fileSizeMb: 1, openFiles: 64 },
        treeMemoryMb: 256,
        tmpMb: 1,
        maxOutputBytes: 4096,
        killOutputBytes: 65536,
        prepared: sandbox,
      },
    );
    return result.status === "Finished" && result.return_code === 0;
  } catch {
    return false;
  } finally {
    await dir.remove();
  }
}
