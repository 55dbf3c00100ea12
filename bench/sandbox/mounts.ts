// What building and tearing down one sandbox costs in CPU, by how its tools are mounted: the tools
// dir mounted whole (as sandboxes are built) against one bind per tool file, alternating, with
// /bin/true bare, and in the sandbox's namespaces alone (util-linux unshare, no mounts), as floors.
// CPU is a cpuacct cgroup around this process, less its own (bench/e2e/cpu.ts; root, cgroup v1).
//   pnpm bench sandbox-mounts [-- --runs 400 --rounds 4]
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { type CommandOptions, runHostCommand } from "../../pipeline/sandbox/command.js";
import { createHostArea, isRoot, removeHostArea } from "../../pipeline/sandbox/host-area.js";
import {
  type HostCommand,
  type SandboxKit,
  TOOLS_DIR,
  wrapInSandbox,
} from "../../pipeline/sandbox/isolation.js";
import { probeIsolation } from "../../pipeline/sandbox/probe.js";
import { RunDirectory } from "../../pipeline/sandbox/workdir.js";
import { numberArg } from "../args.js";
import { CpuGroup, processCpuS, spawnersOf } from "../e2e/cpu.js";
import { median } from "../median.js";

const RUNS = numberArg("runs", 400);
const ROUNDS = numberArg("rounds", 4);

const group = CpuGroup.create("mounts");
if (!group) throw new Error("needs root and cgroup v1's cpuacct to count the sandboxes' CPU");
// before anything starts our spawner, which forks every command and must be in the group too
group.add(process.pid);
const area = await createHostArea({ slots: 1, uidBase: 61000, workDirMb: 64, tmpfs: false, launcher: true });
const slot = area.slots[0]!;
const { mode } = await probeIsolation(slot, area.kit, null);
if (!mode) throw new Error("no sandbox isolation works here");
const dir = RunDirectory.create(slot.runsDir, isRoot() ? slot.uid : null, { withTmp: false });
const view = area.kit.toolBinds.find(([, inside]) => inside === TOOLS_DIR)?.[0];
if (!view) throw new Error("no tools dir in the host area");
// the shape before: every file its own bind, the launcher bound by isolation.ts
const perFile: [string, string][] = readdirSync(view, { withFileTypes: true })
  .filter((entry) => entry.isFile() && entry.name !== "launch")
  .map((entry) => [join(view, entry.name), `${TOOLS_DIR}/${entry.name}`]);
const kits: Record<string, [string, string][]> = {
  "tools dir": area.kit.toolBinds,
  "per file": [...perFile, ...area.kit.toolBinds.filter(([, inside]) => inside !== TOOLS_DIR)],
};

const options: CommandOptions = {
  stdin: null,
  timeoutSeconds: 10,
  maxOutputBytes: 1024,
  killOutputBytes: 4096,
};

function sandboxed(binds: [string, string][], kit: SandboxKit): HostCommand {
  return wrapInSandbox(
    mode!,
    {
      argv: ["/bin/true"],
      env: { PATH: "/usr/bin:/bin" },
      limits: { cpuSeconds: 5, addressSpaceMb: null, processes: 64, fileSizeMb: 16, openFiles: 64 },
      hostWorkDir: dir.work,
      hostUsageFile: null,
      tmpMb: 16,
      uid: slot.uid,
      readOnlyBinds: binds,
    },
    kit,
  );
}

/** CPU ms a command costs in the group, this process's own CPU taken off. */
async function phase(host: HostCommand): Promise<number> {
  const before = group!.usageS() - processCpuS(process.pid);
  for (let i = 0; i < RUNS; i++) {
    const { result } = await runHostCommand(host, options);
    if (result.return_code !== 0) throw new Error(`a benchmark command failed: ${JSON.stringify(result)}`);
  }
  return (1000 * (group!.usageS() - processCpuS(process.pid) - before)) / RUNS;
}

const spawner = area.kit.spawner ?? undefined;
const bare: HostCommand = { file: "/bin/true", args: [], env: {}, cwd: "/", ...(spawner ? { spawner } : {}) };
// the kernel's part alone: the namespaces bwrap makes (the user one as the sandbox's uid, where bwrap
// makes one), a fork into the new PID namespace and /bin/true, with no mount, /dev or seccomp
const userns = mode === "userns";
const namespaces: HostCommand = {
  ...bare,
  file: "/usr/bin/unshare",
  args: [
    ...(userns ? ["--user", "--map-root-user"] : []),
    ...["--mount", "--pid", "--fork", "--net", "--ipc", "--uts", "--cgroup", "/bin/true"],
  ],
  ...(userns && isRoot() ? { uid: slot.uid, gid: slot.uid } : {}),
};
const phases: Record<string, () => HostCommand> = {
  bare: () => bare,
  namespaces: () => namespaces,
  "tools dir": () => sandboxed(kits["tools dir"]!, area.kit),
  "per file": () => sandboxed(kits["per file"]!, area.kit),
};
const results: Record<string, number[]> = Object.fromEntries(Object.keys(phases).map((name) => [name, []]));
try {
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? Object.keys(phases) : Object.keys(phases).reverse();
    for (const name of order) {
      const ms = await phase(phases[name]!());
      results[name]!.push(ms);
      console.log(`  round ${round + 1} ${name.padEnd(10)} ${ms.toFixed(2)} ms CPU a command`);
    }
  }
} finally {
  // the spawner lives on until we exit: out with it too, or the group cannot be removed
  for (const pid of [process.pid, ...spawnersOf(process.pid)]) group.leave(pid);
  await group.remove();
  await dir.remove();
  await removeHostArea(area);
}
const [floor, kernel, whole, each] = ["bare", "namespaces", "tools dir", "per file"].map((name) =>
  median(results[name]!),
);
console.log(
  `medians of ${ROUNDS} rounds of ${RUNS}, mode ${mode}: /bin/true bare ${floor!.toFixed(2)} ms; in the namespaces alone ${kernel!.toFixed(2)} ms; in a sandbox, tools dir ${whole!.toFixed(2)} ms, one bind per tool file ${each!.toFixed(2)} ms (${perFile.length + 1} binds instead of 1, Go's cache aside); the sandbox's cost ${(each! - floor!).toFixed(2)} -> ${(whole! - floor!).toFixed(2)} ms, ${((each! - floor!) / (whole! - floor!)).toFixed(2)}x`,
);
