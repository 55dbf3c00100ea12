// An LLM role with several replicas, against real local OpenAI-compatible servers: one slow, one
// failing, one that asks for a pause. Requests spread by least outstanding, the failing one is
// ejected and probed back, a 429 pauses only its server, and the answers, the usage and the cost are
// those of one server.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { LlmConfig } from "../../pipeline/llm/config.js";
import { UsageMeter } from "../../pipeline/usage.js";
import { type LlmServer, type LlmServerOptions, startLlmServer } from "../support/llm-server.js";
import { tempDir } from "../support/temp-dir.js";
import { ask, recordingLogger, testConfig, testService } from "./helpers.js";

const PRICES = { prices: { "test-model": { prompt: 1, completion: 2 } } };

let servers: LlmServer[] = [];
let dir: string;

async function start(...options: LlmServerOptions[]): Promise<LlmServer[]> {
  const started = await Promise.all(options.map((o) => startLlmServer(o)));
  servers.push(...started);
  return started;
}

function replicas(urls: string[], scorer: Record<string, unknown> = {}): LlmConfig {
  return testConfig(undefined, { base_url: urls, ...scorer }, PRICES);
}

/** Every prompt through a fresh service; the answers in order, and the stage's usage. */
async function score(config: LlmConfig, prompts: string[], dataDir = dir, log = recordingLogger()) {
  const service = testService(config, dataDir, { log });
  const usage = new UsageMeter();
  try {
    const client = service.client("scorer", usage);
    const answers = await Promise.all(prompts.map((p) => client.chat(ask(p)).then((r) => r.content)));
    return { answers, usage: usage.totals, log };
  } finally {
    await service.close();
  }
}

const prompts = (n: number, tag = "q") => Array.from({ length: n }, (_, i) => `${tag} ${i}`);

/** How many times each conversation was answered in full, summed over the servers. */
function answeredPerKey(list: LlmServer[]): number[] {
  const total = new Map<string, number>();
  for (const server of list)
    for (const [key, n] of server.answered) total.set(key, (total.get(key) ?? 0) + n);
  return [...total.values()];
}

beforeEach(() => {
  servers = [];
  dir = tempDir("cf-replicas-");
});
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

describe("an LLM role with several replicas", () => {
  it("gives a slow replica only what it can hold and the rest to the fast one (least outstanding)", async () => {
    const [slow, fast] = await start({ latencyMs: 5000 }, { latencyMs: 5 });
    const { answers, usage } = await score(
      replicas([slow!.url, fast!.url], { concurrency: 3, timeout_s: 30 }),
      prompts(40),
    );
    expect(answers).toHaveLength(40);
    // The first six went out three and three; after that only the fast one ever had fewer outstanding
    // until the slow one answered, by which time (5 s, room for a slow machine) the fast one had long answered the rest.
    expect(slow!.count).toBe(3);
    expect(fast!.count).toBe(37);
    const slowUsage = usage.endpoints?.[slow!.url];
    const fastUsage = usage.endpoints?.[fast!.url];
    expect(slowUsage).toMatchObject({ requests: 3, answered: 3, failures: 0, ejections: 0 });
    expect(fastUsage).toMatchObject({ requests: 37, answered: 37, failures: 0 });
    // mean latency: the slow one's answers took at least its latency
    expect(slowUsage!.latencyMs / slowUsage!.answered).toBeGreaterThanOrEqual(5000);
    expect(fastUsage!.latencyMs / fastUsage!.answered).toBeLessThan(
      slowUsage!.latencyMs / slowUsage!.answered,
    );
  });

  // The 300 s bound on these tests, far beyond a dozen local requests on a loaded machine: a request
  // that waited its hour of backoff, or a 10 min pause (Retry-After, held to MAX_SERVER_WAIT_MS) for
  // the whole role, instead of going to another replica at once would time out.
  it("ejects a failing replica and sends its requests to the others at once", async () => {
    const [good, bad] = await start({}, { fault: () => ({ type: "status", status: 503 }) });
    const config = replicas([good!.url, bad!.url], {
      concurrency: 1,
      balance: { eject_after: 2, eject_s: 600, max_eject_s: 600 },
      // a request that fails on the bad one must not wait before going to the good one
      backoff_s: 3600,
      max_backoff_s: 3600,
    });
    const log = recordingLogger();
    const first = await score(config, prompts(12), dir, log);
    expect(first.answers).toHaveLength(12);
    // two failures in a row, then out for the rest of the batch (however slow the machine)
    expect(bad!.count).toBe(2);
    expect(good!.count).toBe(12);
    expect(first.usage.endpoints?.[bad!.url]).toMatchObject({ requests: 2, failures: 2, ejections: 1 });
    expect(first.usage.failedRequests).toBe(2);
    expect(first.usage.requests).toBe(14);
    expect(log.lines.join("\n")).toContain(`endpoint ${bad!.url} taken out of rotation for 600 s`);
  }, 300_000);

  it("probes an ejected replica after its time out and puts it back when the trial is answered", async () => {
    let broken = true;
    const [good, bad] = await start(
      {},
      { fault: () => (broken ? { type: "status", status: 500 } : undefined) },
    );
    const config = replicas([good!.url, bad!.url], {
      concurrency: 1,
      balance: { eject_after: 1, eject_s: 0.2, max_eject_s: 10 },
    });
    const log = recordingLogger();
    // the pool's clock stands still unless the test moves it: a time out ends when the test says,
    // however slow the machine
    vi.useFakeTimers({ toFake: ["Date"] });
    const service = testService(config, dir, { log });
    const usage = new UsageMeter();
    try {
      const client = service.client("scorer", usage);
      await Promise.all(prompts(4, "a").map((p) => client.chat(ask(p))));
      expect(bad!.count).toBe(1);
      // still out, and its trial fails: out again, for twice as long
      vi.setSystemTime(Date.now() + 250);
      await Promise.all(prompts(4, "b").map((p) => client.chat(ask(p))));
      expect(bad!.count).toBe(2);
      expect(log.lines.join("\n")).toContain("for 0.4 s (its trial request failed)");
      broken = false;
      vi.setSystemTime(Date.now() + 450);
      await Promise.all(prompts(8, "c").map((p) => client.chat(ask(p))));
      expect(log.lines.join("\n")).toContain(`endpoint ${bad!.url} is back in rotation`);
      // back in rotation: it takes its share again
      const before = bad!.count;
      await Promise.all(prompts(8, "d").map((p) => client.chat(ask(p))));
      expect(bad!.count - before).toBeGreaterThanOrEqual(2);
      expect(usage.totals.endpoints?.[bad!.url]).toMatchObject({ failures: 2, ejections: 2 });
    } finally {
      vi.useRealTimers();
      await service.close();
    }
  });

  it("pauses only the replica that answered 429 with Retry-After", async () => {
    const [limited, free] = await start(
      { fault: (request) => (request.n === 1 ? { type: "rate-limit", retryAfterS: 3600 } : undefined) },
      {},
    );
    // The first request goes to the first replica and gets the 429; were the pause for the whole
    // role, every request would wait 10 min and the test would time out.
    const { answers, usage } = await score(
      replicas([limited!.url, free!.url], { concurrency: 1, backoff_s: 3600, max_backoff_s: 3600 }),
      prompts(10),
    );
    expect(answers).toHaveLength(10);
    expect(limited!.count).toBe(1);
    expect(free!.count).toBe(10);
    expect(usage.endpoints?.[limited!.url]).toMatchObject({ requests: 1, failures: 1, ejections: 0 });
  }, 300_000);

  it("pauses a replica that answers 503 with Retry-After instead of ejecting it", async () => {
    const [busy, free] = await start(
      { fault: () => ({ type: "status", status: 503, retryAfterS: 3600 }) },
      {},
    );
    const log = recordingLogger();
    const { answers, usage } = await score(
      replicas([busy!.url, free!.url], { concurrency: 1, balance: { eject_after: 1 } }),
      prompts(6),
      dir,
      log,
    );
    expect(answers).toHaveLength(6);
    expect(busy!.count).toBe(1);
    expect(usage.endpoints?.[busy!.url]).toMatchObject({ requests: 1, failures: 1, ejections: 0 });
    expect(log.lines.join("\n")).not.toContain("taken out of rotation");
  }, 300_000);

  it("answers exactly as one server does, pays each answer once, and keys the cache without the endpoint", async () => {
    const [one] = await start({});
    const single = await score(testConfig(one!.url, {}, PRICES), prompts(30));
    const [slow, failing, fine] = await start(
      { latencyMs: 40 },
      { fault: (_request, attempt) => (attempt === 1 ? { type: "drop" } : undefined) },
      {},
    );
    const other = tempDir("cf-replicas-b-");
    const spread = await score(
      replicas([slow!.url, failing!.url, fine!.url], { concurrency: 2 }),
      prompts(30),
      other,
    );
    expect(spread.answers).toEqual(single.answers);
    // each conversation answered in full once across the replicas: nothing paid twice
    expect(answeredPerKey([slow!, failing!, fine!]).every((n) => n === 1)).toBe(true);
    expect(answeredPerKey([slow!, failing!, fine!])).toHaveLength(30);
    expect(spread.usage.costUsd).toBeCloseTo(single.usage.costUsd, 12);
    expect(spread.usage.promptTokens).toBe(single.usage.promptTokens);
    expect(spread.usage.completionTokens).toBe(single.usage.completionTokens);
    expect(spread.usage.failedRequests).toBeGreaterThan(0);
    // every replica did some of the work
    for (const server of [slow!, failing!, fine!]) expect(server.count).toBeGreaterThan(0);

    // The same data dir with a different list: all from the cache, nothing sent.
    const [elsewhere] = await start({});
    const again = await score(testConfig(elsewhere!.url, {}, PRICES), prompts(30), other);
    expect(again.answers).toEqual(single.answers);
    expect(elsewhere!.count).toBe(0);
    expect(again.usage.cachedRequests).toBe(30);
  });

  it("takes a comma-separated list from the environment, and refuses one that names a server twice", async () => {
    const [a, b] = await start({}, {});
    const config = testConfig(undefined, {}, PRICES);
    const service = testService(config, dir, { env: { OPENAI_BASE_URL: `${a!.url}, ${b!.url}` } });
    const usage = new UsageMeter();
    try {
      const client = service.client("scorer", usage);
      await Promise.all(prompts(6).map((p) => client.chat(ask(p))));
    } finally {
      await service.close();
    }
    expect(a!.count).toBeGreaterThan(0);
    expect(b!.count).toBeGreaterThan(0);
    const twice = testService(replicas([a!.url, `${a!.url}/`]), dir);
    expect(() => twice.client("scorer", new UsageMeter())).toThrow(/names .* twice; list each replica once/);
    await twice.close();
  });
});
