// LLM layer throughput: the filter stage over 20,000 records against the test server (200 ms per
// answer, in a child process) with 256 requests in flight. Prints
//   - achieved requests/s against the ideal (256 / 0.2 s = 1,280/s): should be >= 0.90;
//   - the same against bare node:http at the same concurrency, measured in this run;
//   - a fully cached rerun in records/s: should be >= 20,000/s.
//
//   pnpm exec tsx bench/llm/throughput.ts [--records 20000] [--latency 200] [--concurrency 256]
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { llmConfigSchema } from "../../pipeline/llm/config.js";
import { createLlmService } from "../../pipeline/llm/index.js";
import { silentLogger } from "../../pipeline/log.js";
import type { PipelineRecord, RecordOutcome } from "../../pipeline/record.js";
import type { StageContext } from "../../pipeline/stage.js";
import { UsageMeter } from "../../pipeline/usage.js";
import { type FilterConfig, filterConfigSchema } from "../../stages/filter/config.js";
import { filterRecord } from "../../stages/filter.js";

const arg = (name: string, fallback: number) => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
};
const RECORDS = arg("records", 20_000);
const LATENCY_MS = arg("latency", 200);
const CONCURRENCY = arg("concurrency", 256);
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
  const child: ChildProcess = spawn(process.execPath, [...loader, script, "--latency", String(LATENCY_MS)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const lines = createInterface({ input: child.stdout! });
  const waiting: ((line: string) => void)[] = [];
  lines.on("line", (line) => waiting.shift()?.(line));
  const next = () => new Promise<string>((resolve) => waiting.push(resolve));
  const url = (await next()).replace(/^listening /, "");
  return {
    url,
    count: async () => {
      const line = next();
      child.kill("SIGUSR2");
      const [, requests, cpu] = /^count (\d+) cpu_us (\d+)/.exec(await line) ?? [];
      return { requests: Number(requests), cpu: Number(cpu) };
    },
    stop: () => child.kill("SIGTERM"),
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

function filterContext(dataDir: string, url: string, noCache: boolean) {
  const llm = llmConfigSchema.parse({
    scorer: { base_url: url, model: "bench-scorer", concurrency: CONCURRENCY, timeout_s: 30 },
  });
  const service = createLlmService(llm, { dataDir, noCache, log: silentLogger, env: {} });
  const usage = new UsageMeter();
  const config = filterConfigSchema.parse({});
  const ctx = {
    name: "filter",
    config,
    root: { llm } as unknown as StageContext<FilterConfig>["root"],
    dataDir,
    workDir: dataDir,
    limit: undefined,
    signal: new AbortController().signal,
    log: silentLogger,
    services: { llm: (role: string, meter: UsageMeter) => service.client(role, meter) },
    usage,
  } as unknown as StageContext<FilterConfig>;
  return { ctx, service, usage };
}

async function main(): Promise<void> {
  const server = await startServer();
  const dataDir = mkdtempSync(join(tmpdir(), "cf-bench-llm-"));
  try {
    const input = records(RECORDS);
    process.stdout.write(
      `bench/llm: ${RECORDS.toLocaleString("en-US")} records, ${LATENCY_MS} ms per answer, ` +
        `${CONCURRENCY} in flight (ideal ${IDEAL.toLocaleString("en-US")} requests/s)\n`,
    );

    await bareHttp(server.url, CONCURRENCY);
    const baseline = await bareHttp(server.url, Math.min(RECORDS, 10_000));
    const before = await server.count();

    const cold = filterContext(dataDir, server.url, false);
    const outcomes: RecordOutcome[] = [];
    let cpu = process.cpuUsage();
    let started = performance.now();
    await drive(input, 2 * CONCURRENCY, async (r) => outcomes.push(await filterRecord(r, cold.ctx)));
    const coldSeconds = (performance.now() - started) / 1000;
    const coldCpu = process.cpuUsage(cpu);
    const afterCold = await server.count();
    const sent = afterCold.requests - before.requests;
    const serverCpu = (afterCold.cpu - before.cpu) / sent;
    await cold.service.close();
    const achieved = sent / coldSeconds;
    const kept = outcomes.filter((o) => o.out?.length).length;
    const failed = outcomes.filter((o) => o.failed).length;

    const warm = filterContext(dataDir, server.url, false);
    cpu = process.cpuUsage();
    started = performance.now();
    await drive(input, 2 * CONCURRENCY, (r) => filterRecord(r, warm.ctx));
    const warmSeconds = (performance.now() - started) / 1000;
    const warmCpu = process.cpuUsage(cpu);
    const resent = (await server.count()).requests - afterCold.requests;
    await warm.service.close();
    const cachedRate = RECORDS / warmSeconds;

    const micros = (usage: NodeJS.CpuUsage, n: number) => (usage.user + usage.system) / n;
    const f = (x: number, digits = 0) =>
      x.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
    process.stdout.write(
      [
        `bare node:http:        ${f(baseline)} requests/s (${f(baseline / IDEAL, 2)} of ideal)`,
        `filter, cold cache:    ${f(sent)} requests in ${f(coldSeconds, 1)} s = ${f(achieved)} requests/s; ` +
          `kept ${f(kept)}, failed ${f(failed)}`,
        `  ratio to ideal:      ${f(achieved / IDEAL, 3)}   (target >= 0.90)`,
        `  ratio to bare http:  ${f(achieved / baseline, 3)}`,
        `  CPU per request:     client ${f(micros(coldCpu, sent))} us, test server ${f(serverCpu)} us`,
        `filter, fully cached:  ${f(RECORDS)} records in ${f(warmSeconds, 2)} s = ${f(cachedRate)} records/s, ` +
          `${f(resent)} requests sent`,
        `  ratio to 20,000/s:   ${f(cachedRate / 20_000, 2)}   (target >= 1.00)`,
        `  CPU:                 ${f(micros(warmCpu, RECORDS), 1)} us per record`,
        `load average at the end: ${loadavg()
          .map((x) => x.toFixed(2))
          .join(" ")} on ${cpus().length} cores (other processes skew these figures)`,
        "",
      ].join("\n"),
    );
  } finally {
    server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
