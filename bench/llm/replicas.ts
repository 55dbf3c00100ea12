// What a role gains from a list of replicas: three test LLM servers (child processes) answering after
// `--latency` ms, `--concurrency` requests in flight per endpoint, every prompt fresh (cache off). In
// one run: one endpoint (the baseline), three equal ones, one of three `--slow` times slower (ideal:
// 2 + 1/slow times the baseline), one refusing connections (ideal 2.0); each a ratio to its ideal.
//   pnpm bench llm-replicas [-- --requests 4000 --latency 100 --concurrency 16 --slow 10]
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { llmConfigSchema } from "../../pipeline/llm/config.js";
import { createLlmService } from "../../pipeline/llm/index.js";
import { silentLogger } from "../../pipeline/log.js";
import { UsageMeter } from "../../pipeline/usage.js";
import { numberArg } from "../args.js";
import { startServerProcess } from "../server-process.js";

const REQUESTS = numberArg("requests", 4000);
const LATENCY_MS = numberArg("latency", 100);
const CONCURRENCY = numberArg("concurrency", 16);
const SLOW = numberArg("slow", 10);

interface ServerProcess {
  url: string;
  stop(): void;
}

async function startServer(latencyMs: number): Promise<ServerProcess> {
  const script = new URL("../../test/support/llm-server.ts", import.meta.url).pathname;
  const server = startServerProcess(script, ["--latency", String(latencyMs)]);
  return { url: (await server.next()).replace(/^listening /, ""), stop: server.stop };
}

/** Requests/s for REQUESTS fresh prompts against `urls`, and what each endpoint did. */
async function measure(label: string, urls: string[]) {
  const dir = mkdtempSync(join(tmpdir(), "cf-bench-replicas-"));
  const config = llmConfigSchema.parse({
    scorer: {
      provider: "openai",
      base_url: urls,
      model: "bench",
      concurrency: CONCURRENCY,
      retries: 6,
      backoff_s: 0.05,
      max_backoff_s: 0.2,
      balance: { eject_after: 3, eject_s: 60 },
    },
  });
  const service = createLlmService(config, { dataDir: dir, noCache: true, log: silentLogger });
  const usage = new UsageMeter();
  const client = service.client("scorer", usage);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: REQUESTS }, (_, i) =>
      client.chat([{ role: "user", content: `${label} ${i}` }], { noCache: true }),
    ),
  );
  const seconds = (performance.now() - started) / 1000;
  await service.close();
  rmSync(dir, { recursive: true, force: true });
  return { perSecond: REQUESTS / seconds, usage: usage.totals };
}

async function main() {
  const fast = await Promise.all([startServer(LATENCY_MS), startServer(LATENCY_MS), startServer(LATENCY_MS)]);
  const slow = await startServer(LATENCY_MS * SLOW);
  // A port nobody listens on: connection refused at once, as a crashed replica.
  const dead = "http://127.0.0.1:9/v1";
  try {
    console.log(
      `${REQUESTS} requests, ${LATENCY_MS} ms per answer, ${CONCURRENCY} in flight per endpoint; ` +
        `${cpus().length} cores, load ${loadavg()[0]!.toFixed(1)}`,
    );
    // warm-up: connections, JIT
    await measure("warm", [fast[0]!.url]);
    const one = await measure("one", [fast[0]!.url]);
    console.log(`one endpoint:              ${one.perSecond.toFixed(0)} req/s (baseline)`);
    const three = await measure(
      "three",
      fast.map((s) => s.url),
    );
    console.log(
      `three endpoints:           ${three.perSecond.toFixed(0)} req/s = ${(three.perSecond / one.perSecond).toFixed(2)}x the baseline (ideal 3.00)`,
    );
    const mixedIdeal = 2 + 1 / SLOW;
    const mixed = await measure("mixed", [fast[0]!.url, fast[1]!.url, slow.url]);
    const slowShare = mixed.usage.endpoints?.[slow.url]?.requests ?? 0;
    console.log(
      `two + one ${SLOW}x slower:      ${mixed.perSecond.toFixed(0)} req/s = ${(mixed.perSecond / one.perSecond / mixedIdeal).toFixed(2)} of the ideal ${mixedIdeal.toFixed(2)}x (the slow one took ${slowShare} of ${REQUESTS})`,
    );
    const withDead = await measure("dead", [fast[0]!.url, fast[1]!.url, dead]);
    const deadStats = withDead.usage.endpoints?.[dead];
    console.log(
      `two + one refusing:        ${withDead.perSecond.toFixed(0)} req/s = ${(withDead.perSecond / one.perSecond / 2).toFixed(2)} of the ideal 2.00x (the dead one: ${deadStats?.requests ?? 0} requests, ${deadStats?.ejections ?? 0} ejection)`,
    );
  } finally {
    for (const server of [...fast, slow]) server.stop();
  }
}

await main();
