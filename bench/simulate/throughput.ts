// simulate's throughput: `--queries` queries against the test LLM server (its own process, `--latency`
// ms per answer) with the embedded sandbox, in dialogues/s against the ideal the same run's limits
// allow: the LLM's, the records in flight's, and the sandbox's (`--baseline-runs` programs measured
// alone first). Target >= 0.80.
//   pnpm bench simulate [-- --queries 2000 --latency 200 --llm-concurrency 64 --baseline-runs 300]
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { runBlock } from "../../pipeline/execution/index.js";
import { llmConfigSchema } from "../../pipeline/llm/config.js";
import { createLlmService } from "../../pipeline/llm/index.js";
import { silentLogger } from "../../pipeline/log.js";
import type { PipelineRecord, RecordOutcome } from "../../pipeline/record.js";
import { defaultWorkers, EmbeddedSandbox, sandboxConfigSchema } from "../../pipeline/sandbox/index.js";
import type { StageContext } from "../../pipeline/stage.js";
import { UsageMeter } from "../../pipeline/usage.js";
import { openDialogueServices } from "../../stages/dialogue-kit/services.js";
import { type SimulateConfig, simulateConfigSchema } from "../../stages/simulate/config.js";
import { simulateInteraction } from "../../stages/simulate.js";
import { numberArg } from "../args.js";
import { heapFlags, startServerProcess } from "../server-process.js";

const QUERIES = numberArg("queries", 2_000);
const LATENCY_S = numberArg("latency", 200) / 1000;
const LLM_CONCURRENCY = numberArg("llm-concurrency", 64);
const BASELINE_RUNS = numberArg("baseline-runs", 300);
const WORKERS = numberArg("workers", defaultWorkers());
/** per dialogue: weak answer; strong analysis, reviewer, refinement, analysis */
const CALLS = { weak: 1, strong: 4 };
const RUNS_PER_DIALOGUE = 2;

async function startServer(): Promise<{ url: string; stop(): void }> {
  const script = new URL("./server.ts", import.meta.url).pathname;
  const server = startServerProcess(
    script,
    ["--latency", String(LATENCY_S * 1000)],
    [...heapFlags(), "--import", "tsx"],
  );
  const url = (await server.next()).replace(/^listening /, "");
  return { url, stop: server.stop };
}

function queries(n: number): (PipelineRecord & { query: string })[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `bench:${i}`,
    query: `Write a Python program that adds up the numbers below ${i % 89} and prints the total (${i}).`,
    answer: "",
    resource: "evolinstruct",
    lang: "python",
  }));
}

/**
 * The sandbox alone: the benchmark's two programs, with four requests per worker outstanding so its
 * queue never runs dry (as under the stage, where many dialogues wait for it).
 */
async function sandboxThroughput(sandbox: EmbeddedSandbox): Promise<number> {
  const programs = ["total = sum(range(40))\nprint(total)", "# add the numbers up\nprint(total * 2)"];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: 4 * WORKERS }, async () => {
      while (next < BASELINE_RUNS) {
        const i = next++;
        const previous = i % 2 ? [programs[0]!] : [];
        const result = await runBlock(sandbox, programs[i % 2]!, "python", { previous });
        if (result.status !== "success")
          throw new Error(`baseline run failed: ${result.status} ${result.stderr}`);
      }
    }),
  );
  return BASELINE_RUNS / ((performance.now() - started) / 1000);
}

function stageContext(dataDir: string, url: string, sandbox: EmbeddedSandbox) {
  const role = (model: string) => ({
    provider: "openai",
    base_url: url,
    model,
    concurrency: LLM_CONCURRENCY,
    timeout_s: 60,
  });
  const llm = llmConfigSchema.parse({ weak: role("bench-weak"), strong: role("bench-strong") });
  const service = createLlmService(llm, { dataDir, noCache: false, log: silentLogger, env: {} });
  const config = simulateConfigSchema.parse({ execution: { concurrency: WORKERS } });
  const ctx = {
    name: "simulate",
    config,
    root: { llm, sandbox: sandboxConfigSchema.parse({ workers: WORKERS }) },
    dataDir,
    workDir: join(dataDir, "work"),
    limit: undefined,
    signal: new AbortController().signal,
    log: silentLogger,
    services: {
      llm: (r: string, meter: UsageMeter) => service.client(r, meter),
      sandbox: () => sandbox,
      close: async () => {},
    },
    usage: new UsageMeter(),
  } as unknown as StageContext<SimulateConfig>;
  return { ctx, service, inFlight: simulateStageConcurrency(config) };
}

/** The stage's default records in flight: twice the strong role's requests plus the programs at once. */
function simulateStageConcurrency(_config: SimulateConfig): number {
  return 2 * LLM_CONCURRENCY + WORKERS;
}

const f = (x: number, digits = 1) =>
  x.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });

async function main() {
  process.stdout.write(
    `simulate: ${QUERIES} queries, LLM latency ${LATENCY_S * 1000} ms, ${LLM_CONCURRENCY} requests in flight per role, ` +
      `${WORKERS} sandbox workers; ${cpus().length} cores, load ${loadavg()
        .map((x) => f(x, 2))
        .join(" ")}\n`,
  );
  const server = await startServer();
  const sandbox = new EmbeddedSandbox(sandboxConfigSchema.parse({ workers: WORKERS, queue: 100_000 }));
  const dataDir = mkdtempSync(join(tmpdir(), "cf-bench-simulate-"));
  try {
    const before = await sandboxThroughput(sandbox);
    const { ctx, service, inFlight } = stageContext(dataDir, server.url, sandbox);
    const input = queries(QUERIES);
    const outcomes: RecordOutcome[] = [];
    let next = 0;
    const services = openDialogueServices(ctx);
    const started = performance.now();
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (next < input.length) outcomes.push(await simulateInteraction(input[next++]!, ctx, services));
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    await service.close();
    // Measured before and after the stage, the better of the two: the load of a shared machine moves.
    const after = await sandboxThroughput(sandbox);
    const runsPerS = Math.max(before, after);
    process.stdout.write(
      `sandbox alone: ${f(before)} runs/s before, ${f(after)} after (${BASELINE_RUNS} runs each, ${WORKERS} workers)\n`,
    );
    const dialogues = outcomes.filter((o) => o.out?.length).length;
    const failed = outcomes.filter((o) => o.failed || o.rejects?.length);
    if (failed.length > 0)
      throw new Error(`${failed.length} dialogues did not complete: ${JSON.stringify(failed[0])}`);
    const achieved = dialogues / seconds;
    const llmBound = Math.min(
      LLM_CONCURRENCY / (CALLS.weak * LATENCY_S),
      LLM_CONCURRENCY / (CALLS.strong * LATENCY_S),
    );
    const runSeconds = WORKERS / runsPerS;
    const latencyBound =
      inFlight / ((CALLS.weak + CALLS.strong) * LATENCY_S + RUNS_PER_DIALOGUE * runSeconds);
    const sandboxBound = runsPerS / RUNS_PER_DIALOGUE;
    const ideal = Math.min(llmBound, latencyBound, sandboxBound);
    const limit =
      ideal === sandboxBound ? "sandbox" : ideal === llmBound ? "LLM concurrency" : "records in flight";
    process.stdout.write(
      `ideal: ${f(ideal)} dialogues/s (bound by the ${limit}; LLM ${f(llmBound)}, records in flight ${f(latencyBound)}, sandbox ${f(sandboxBound)})\n` +
        `achieved: ${dialogues} dialogues in ${f(seconds)} s = ${f(achieved)} dialogues/s, ratio ${f(achieved / ideal, 2)} (target >= 0.80)\n`,
    );
  } finally {
    await sandbox.close();
    server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
