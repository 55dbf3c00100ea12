// The baselines the stages are measured against, each in its own process so its CPU is its own:
// `copy`, a bare streaming copy of the rows normalize reads (its floor), and `sandbox`, the sandbox
// alone running the benchmark's Python program with every worker busy. Prints one JSON line.
//   node --import tsx bench/e2e/baselines.ts copy --dir DIR --scale S
//   node --import tsx bench/e2e/baselines.ts sandbox --workers W --runs N
import path from "node:path";
import { EmbeddedSandbox, sandboxConfigSchema } from "../../pipeline/sandbox/index.js";
import { textArg } from "../args.js";
import { corpusLayout } from "../ingest/corpus.js";
import { streamingCopy } from "../ingest/streaming-copy.js";
import { keepSandboxBusy } from "../sandbox/busy.js";

async function copy(dir: string, scale: number) {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const rows = await streamingCopy(
    corpusLayout(dir, scale).map((s) => s.plain),
    path.join(dir, "copy.jsonl"),
  );
  const used = process.cpuUsage(cpu);
  return { rows, wallS: (performance.now() - started) / 1000, cpuS: (used.user + used.system) / 1e6 };
}

async function sandboxRate(workers: number, runs: number) {
  const sandbox = new EmbeddedSandbox(sandboxConfigSchema.parse({ workers, queue: 100_000 }));
  try {
    const started = performance.now();
    await keepSandboxBusy(sandbox, runs, workers);
    return { runs, perSecond: runs / ((performance.now() - started) / 1000) };
  } finally {
    await sandbox.close();
  }
}

const phase = process.argv[2];
const result =
  phase === "copy"
    ? await copy(textArg("dir")!, Number(textArg("scale")))
    : await sandboxRate(Number(textArg("workers")), Number(textArg("runs") ?? 200));
process.stdout.write(`${JSON.stringify(result)}\n`);
