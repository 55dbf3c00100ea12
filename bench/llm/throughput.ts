// LLM layer throughput: the filter stage over `--records` records against the test server (its own
// process, `--latency` ms per answer), `--concurrency` requests in flight: requests/s against the
// ideal and against bare node:http, then a fully cached rerun in records/s. `--runs` runs, each with
// a fresh cache, after a warm-up over `--warmup` other records; every run and the median printed.
//   pnpm bench llm [-- --records 20000 --latency 200 --concurrency 256 --runs 3 --warmup 2000]
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { llmConfigSchema } from "../../pipeline/llm/config.js";
import { createLlmService } from "../../pipeline/llm/index.js";
import { silentLogger } from "../../pipeline/log.js";
import type { PipelineRecord, RecordOutcome } from "../../pipeline/record.js";
import { filterConfigSchema } from "../../stages/filter/config.js";
import { filterRecord, openFilter } from "../../stages/filter.js";
import { numberArg } from "../args.js";
import { median } from "../median.js";
import { heapFlags, startServerProcess } from "../server-process.js";
import { filterContext } from "./filter-context.js";

const RECORDS = numberArg("records", 20_000);
const LATENCY_MS = numberArg("latency", 200);
const CONCURRENCY = numberArg("concurrency", 256);
const RUNS = numberArg("runs", 3);
const WARMUP = numberArg("warmup", 2_000);
const IDEAL = CONCURRENCY / (LATENCY_MS / 1000);

interface ServerProcess {
  url: string;
  /** requests received and the server's CPU time so far (microseconds) */
  count(): Promise<{ requests: number; cpu: number }>;
  stop(): void;
}

async function startServer(): Promise<ServerProcess> {
  // BENCH_LLM_SERVER: a prebuilt server script (.mjs), to run this benchmark bundled elsewhere.
  const prebuilt = process.env.BENCH_LLM_SERVER;
  const script = prebuilt ?? new URL("../../test/support/llm-server.ts", import.meta.url).pathname;
  const loader = prebuilt ? [] : ["--import", "tsx"];
  // The server runs with this process's node flags, like a second `pnpm pipeline` process would.
  const { child, next, stop } = startServerProcess(
    script,
    ["--latency", String(LATENCY_MS)],
    [...heapFlags(), ...loader],
  );
  const url = (await next()).replace(/^listening /, "");
  return {
    url,
    count: async () => {
      const line = next();
      child.kill("SIGUSR2");
      const [, requests, cpu] = /^count (\d+) cpu_us (\d+)/.exec(await line) ?? [];
      return { requests: Number(requests), cpu: Number(cpu) };
    },
    stop,
  };
}

function records(n: number): PipelineRecord[] {
  const langs = ["python", "java", "cpp", "javascript", "sql"];
  return Array.from({ length: n }, (_, i) => ({
    id: `bench:${i}`,
    query: `Write a function number ${i} that merges ${i % 97} sorted lists and explain its complexity.`,
    answer: "def merge(lists): ...",
    resource: i % 3 ? "evolinstruct" : "codealpaca",
    lang: langs[i % langs.length]!,
  }));
}

/** The runner's loop, without its store: at most `inFlight` records at once. */
async function drive(
  input: PipelineRecord[],
  inFlight: number,
  process: (r: PipelineRecord) => Promise<unknown>,
) {
  let next = 0;
  const worker = async () => {
    while (next < input.length) await process(input[next++]!);
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
}

/** The floor: node:http with a keep-alive agent, no SDK, no cache, no parsing of scores. */
async function bareHttp(url: string, n: number): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const target = new URL(`${url}/chat/completions`);
  const one = (i: number) =>
    new Promise<void>((resolve, reject) => {
      const body = JSON.stringify({ model: "m", messages: [{ role: "user", content: `baseline ${i}` }] });
      const request = http.request(
        target,
        {
          method: "POST",
          agent,
          headers: { "content-type": "application/json", "content-length": body.length },
        },
        (res) => {
          res.on("data", () => {});
          res.on("end", resolve);
        },
      );
      request.on("error", reject);
      request.end(body);
    });
  const started = performance.now();
  let i = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (i < n) await one(i++);
    }),
  );
  agent.destroy();
  return n / ((performance.now() - started) / 1000);
}

function scorerContext(dataDir: string, url: string, noCache: boolean) {
  const llm = llmConfigSchema.parse({
    scorer: { base_url: url, model: "bench-scorer", concurrency: CONCURRENCY, timeout_s: 30 },
  });
  const service = createLlmService(llm, { dataDir, noCache, log: silentLogger, env: {} });
  const ctx = filterContext(llm, service, filterConfigSchema.parse({}), dataDir);
  return { ctx, service };
}

interface RunFigures {
  sent: number;
  coldSeconds: number;
  achieved: number;
  kept: number;
  failed: number;
  clientCpu: number;
  serverCpu: number;
  warmSeconds: number;
  resent: number;
  cachedRate: number;
  cachedCpu: number;
}

const micros = (usage: NodeJS.CpuUsage, n: number) => (usage.user + usage.system) / n;
const f = (x: number, digits = 0) =>
  x.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });

/** One cold run (every answer from the server) then a fully cached rerun, in a fresh cache. */
async function measure(server: ServerProcess, input: PipelineRecord[]): Promise<RunFigures> {
  const dataDir = mkdtempSync(join(tmpdir(), "cf-bench-llm-"));
  try {
    const before = await server.count();
    const cold = scorerContext(dataDir, server.url, false);
    const outcomes: RecordOutcome[] = [];
    let cpu = process.cpuUsage();
    let started = performance.now();
    const coldRun = openFilter(cold.ctx);
    await drive(input, 2 * CONCURRENCY, async (r) => outcomes.push(await filterRecord(r, cold.ctx, coldRun)));
    const coldSeconds = (performance.now() - started) / 1000;
    const coldCpu = process.cpuUsage(cpu);
    const afterCold = await server.count();
    const sent = afterCold.requests - before.requests;
    await cold.service.close();

    const warm = scorerContext(dataDir, server.url, false);
    cpu = process.cpuUsage();
    started = performance.now();
    const warmRun = openFilter(warm.ctx);
    await drive(input, 2 * CONCURRENCY, (r) => filterRecord(r, warm.ctx, warmRun));
    const warmSeconds = (performance.now() - started) / 1000;
    const warmCpu = process.cpuUsage(cpu);
    const resent = (await server.count()).requests - afterCold.requests;
    await warm.service.close();
    return {
      sent,
      coldSeconds,
      achieved: sent / coldSeconds,
      kept: outcomes.filter((o) => o.out?.length).length,
      failed: outcomes.filter((o) => o.failed).length,
      clientCpu: micros(coldCpu, sent),
      serverCpu: (afterCold.cpu - before.cpu) / sent,
      warmSeconds,
      resent,
      cachedRate: input.length / warmSeconds,
      cachedCpu: micros(warmCpu, input.length),
    };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const server = await startServer();
  try {
    const input = records(RECORDS);
    process.stdout.write(
      `bench/llm: ${RECORDS.toLocaleString("en-US")} records, ${LATENCY_MS} ms per answer, ` +
        `${CONCURRENCY} in flight (ideal ${IDEAL.toLocaleString("en-US")} requests/s), ${RUNS} run(s); ` +
        `node ${process.version} ${process.execArgv.filter((a) => a.startsWith("--max-")).join(" ") || "(default heap)"}\n`,
    );

    await bareHttp(server.url, CONCURRENCY);
    const baseline = await bareHttp(server.url, Math.min(RECORDS, 10_000));
    process.stdout.write(
      `bare node:http:        ${f(baseline)} requests/s (${f(baseline / IDEAL, 2)} of ideal)\n`,
    );

    // Uncounted: compiles the client's code paths first, as they are in any run longer than this
    // benchmark (the first pass over fresh code runs several percent slower).
    await measure(
      server,
      records(WARMUP).map((r) => ({ ...r, id: `warmup:${r.id}`, query: `warm-up ${r.query}` })),
    );
    const runs: RunFigures[] = [];
    for (let run = 1; run <= RUNS; run++) {
      const r = await measure(server, input);
      runs.push(r);
      process.stdout.write(
        [
          `run ${run}: filter, cold cache: ${f(r.sent)} requests in ${f(r.coldSeconds, 1)} s = ${f(r.achieved)} requests/s; ` +
            `kept ${f(r.kept)}, failed ${f(r.failed)}`,
          `  ratio to ideal:      ${f(r.achieved / IDEAL, 3)}   (target >= 0.90)`,
          `  ratio to bare http:  ${f(r.achieved / baseline, 3)}`,
          `  CPU per request:     client ${f(r.clientCpu)} us, test server ${f(r.serverCpu)} us`,
          `  fully cached:        ${f(RECORDS)} records in ${f(r.warmSeconds, 2)} s = ${f(r.cachedRate)} records/s, ` +
            `${f(r.resent)} requests sent`,
          `  ratio to 20,000/s:   ${f(r.cachedRate / 20_000, 2)}   (target >= 1.00)`,
          `  CPU:                 ${f(r.cachedCpu, 1)} us per cached record`,
          "",
        ].join("\n"),
      );
    }
    const ratio = median(runs.map((r) => r.achieved / IDEAL));
    const cached = median(runs.map((r) => r.cachedRate));
    process.stdout.write(
      [
        `median of ${RUNS}: ratio to ideal ${f(ratio, 3)} (target >= 0.90: ${ratio >= 0.9 ? "met" : "NOT met"}), ` +
          `cached ${f(cached)} records/s = ${f(cached / 20_000, 2)} of 20,000/s ` +
          `(${cached >= 20_000 ? "met" : "NOT met"}); runs: ${runs.map((r) => f(r.achieved / IDEAL, 3)).join(", ")}`,
        `load average at the end: ${loadavg()
          .map((x) => x.toFixed(2))
          .join(" ")} on ${cpus().length} cores (other processes skew these figures)`,
        "",
      ].join("\n"),
    );
  } finally {
    server.stop();
  }
}

await main();
