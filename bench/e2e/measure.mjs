// Preloaded into every pipeline process the benchmark starts (`--import` or NODE_OPTIONS): on exit,
// appends the process's own peak RSS and CPU time to $BENCH_E2E_USAGE as one JSON line, so a shard
// started by `pipeline launch` is measured as well as a stage the benchmark starts itself.
// Plain JavaScript, so it loads before (and without) the TypeScript loader.
import { appendFileSync, readFileSync } from "node:fs";

const file = process.env.BENCH_E2E_USAGE;
const started = performance.now();
if (file) {
  process.on("exit", (code) => {
    const usage = process.resourceUsage();
    const line = {
      pid: process.pid,
      ppid: process.ppid,
      argv: process.argv.slice(2),
      code,
      maxRssKiB: usage.maxRSS,
      cpuS: (usage.userCPUTime + usage.systemCPUTime) / 1e6 + spawnerCpuS(),
      wallS: (performance.now() - started) / 1000,
    };
    appendFileSync(file, `${JSON.stringify(line)}\n`);
  });
}

/**
 * CPU seconds of this process's sandbox spawner (pipeline/sandbox/spawner.c, a child that forks the
 * sandboxes on this process's behalf): that work is this process's own, as it was when Node forked
 * them itself. Read at exit, while the spawner still runs.
 */
function spawnerCpuS() {
  let sum = 0;
  try {
    const ticks = 100; // USER_HZ: the kernel's unit for /proc/PID/stat on Linux
    const children = readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, "utf8")
      .trim()
      .split(/\s+/);
    for (const child of children.filter(Boolean)) {
      const argv0 = readFileSync(`/proc/${child}/cmdline`, "utf8").split("\0")[0];
      if (!/\/codefeedback-sandbox-tools-[^/]+\/spawn-[0-9a-f]+$/.test(argv0)) continue;
      const stat = readFileSync(`/proc/${child}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      sum += (Number(fields[11]) + Number(fields[12])) / ticks;
    }
  } catch {
    // no children file, or a child gone meanwhile: what was read counts
  }
  return sum;
}
