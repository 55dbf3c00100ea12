// Preloaded into every pipeline process the benchmark starts (`--import` or NODE_OPTIONS): on exit,
// appends the process's own peak RSS and CPU time to $BENCH_E2E_USAGE as one JSON line, so a shard
// started by `pipeline launch` is measured as well as a stage the benchmark starts itself.
// Plain JavaScript, so it loads before (and without) the TypeScript loader.
import { appendFileSync } from "node:fs";

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
      cpuS: (usage.userCPUTime + usage.systemCPUTime) / 1e6,
      wallS: (performance.now() - started) / 1000,
    };
    appendFileSync(file, `${JSON.stringify(line)}\n`);
  });
}
