// `sandbox.url` listing several /run_code servers: our real server (pipeline/sandbox/server.ts) in
// front of a runner that answers without running anything (what is under test is the client's
// spreading, not the sandbox), one slow, one failing with 500, one answering 429 with Retry-After.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { rootConfigSchema } from "../../pipeline/config/schema.js";
import { callSandbox } from "../../pipeline/sandbox/call.js";
import { HttpSandboxClient } from "../../pipeline/sandbox/client.js";
import { sandboxConfigSchema } from "../../pipeline/sandbox/config.js";
import { startSandboxServer } from "../../pipeline/sandbox/server.js";
import type { CodeRunner, RunCodeRequest, RunCodeResponse } from "../../pipeline/sandbox/types.js";
import { createServices, stageServices } from "../../pipeline/services.js";
import { UsageMeter } from "../../pipeline/usage.js";
import { recordingLogger } from "../llm/helpers.js";
import { echoResponse } from "../support/echo-runner.js";

/** Answers every run with its code as stdout, after `delayMs`; counts what it was asked. */
class EchoRunner implements CodeRunner {
  count = 0;
  constructor(private readonly delayMs: number) {}
  async run(request: RunCodeRequest): Promise<RunCodeResponse> {
    this.count++;
    await new Promise((r) => setTimeout(r, this.delayMs));
    return echoResponse(request);
  }
  async close(): Promise<void> {}
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function runCodeServer(delayMs: number): Promise<{ url: string; runner: EchoRunner }> {
  const runner = new EchoRunner(delayMs);
  const server = await startSandboxServer({ runner, port: 0, maxBodyBytes: 1 << 20 });
  closers.push(() => server.close());
  return { url: server.url, runner };
}

/**
 * A server that answers every request with `status` (and Retry-After, if given), counting the runs
 * (not the client's GET, which asks only whether anything answers there).
 */
async function refusingServer(
  status: number,
  retryAfterS?: number,
): Promise<{ url: string; count: () => number }> {
  let count = 0;
  const server: Server = createServer((req, res) => {
    if (req.method === "POST") count++;
    req.resume();
    req.on("end", () => {
      res.writeHead(status, {
        "content-type": "application/json",
        ...(retryAfterS === undefined ? {} : { "retry-after": String(retryAfterS) }),
      });
      res.end(JSON.stringify({ detail: "not now" }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, count: () => count };
}

function client(urls: string[], extra: Record<string, unknown> = {}): HttpSandboxClient {
  const c = new HttpSandboxClient(sandboxConfigSchema.parse({ url: urls, workers: 2, ...extra }));
  closers.push(() => c.close());
  return c;
}

const programs = (n: number) => Array.from({ length: n }, (_, i) => `print(${i})`);

describe("several /run_code servers", () => {
  it("says what a server that answered every attempt with an error said, not that it could not be reached", async () => {
    const broken = await refusingServer(500);
    const c = client([broken.url], { client_retries: 1 });
    const failure = c.run({ code: "print(1)", language: "python" });
    await expect(failure).rejects.toThrow(
      /failed the run 2 attempts in a row; the last answer: .*HTTP 500: .*not now/,
    );
    await expect(failure).rejects.not.toThrow(/could not reach/);
    expect(broken.count()).toBe(2);
  });

  it("spreads runs by least outstanding, ejects the failing server, and answers every run", async () => {
    const slow = await runCodeServer(8000);
    const fast = await runCodeServer(20);
    const failing = await refusingServer(500);
    const usage = new UsageMeter();
    const c = client([slow.url, failing.url, fast.url], {
      client_retries: 3,
      balance: { eject_after: 2, eject_s: 60 },
    });
    const results = await Promise.all(
      programs(30).map((code) => c.run({ code, language: "python" }, { usage })),
    );
    expect(results.map((r) => r.run_result?.stdout)).toEqual(programs(30));
    expect(results.every((r) => r.status === "Success")).toBe(true);
    // the slow one held its two for 8 s (room for a slow machine); the fast one did the rest meanwhile
    expect(slow.runner.count).toBe(2);
    expect(fast.runner.count).toBe(28);
    // out after its failures, never tried again in this run (60 s)
    const failed = usage.totals.endpoints?.[`${failing.url}/run_code`];
    expect(failed).toMatchObject({ ejections: 1, answered: 0 });
    expect(failed!.failures).toBe(failing.count());
    expect(failing.count()).toBeLessThanOrEqual(3);
    expect(usage.totals.endpoints?.[`${fast.url}/run_code`]).toMatchObject({ requests: 28, answered: 28 });
    // what the client saw is what the stage was told
    expect(c.endpointStats()[`${fast.url}/run_code`]).toMatchObject({ requests: 28, answered: 28 });
  });

  it("pauses only the server that answered 429 with Retry-After", async () => {
    const limited = await refusingServer(429, 3600);
    const ok = await runCodeServer(5);
    // were the whole client paused, every run would wait an hour and the test would time out
    const c = client([limited.url, ok.url], { workers: 1 });
    const results = await Promise.all(programs(10).map((code) => c.run({ code, language: "python" })));
    expect(results.every((r) => r.status === "Success")).toBe(true);
    expect(limited.count()).toBe(1);
    expect(ok.runner.count).toBe(10);
  }, 300_000);

  it("a stage's sandbox counts per server in the stage's usage, through the services", async () => {
    const a = await runCodeServer(1);
    const b = await runCodeServer(1);
    const root = rootConfigSchema.parse({ sandbox: { url: [a.url, b.url], workers: 1 } });
    const services = createServices(root, { dataDir: "/nonexistent", log: recordingLogger() });
    closers.push(() => services.close());
    const usage = new UsageMeter();
    const runner = stageServices(services, usage).sandbox();
    const calls = await Promise.all(
      programs(6).map((code) => callSandbox(runner, { code, language: "python" })),
    );
    expect(calls.map((call) => call.response.run_result?.stdout)).toEqual(programs(6));
    const endpoints = usage.totals.endpoints ?? {};
    expect(Object.keys(endpoints).sort()).toEqual([`${a.url}/run_code`, `${b.url}/run_code`].sort());
    expect(endpoints[`${a.url}/run_code`]!.requests + endpoints[`${b.url}/run_code`]!.requests).toBe(6);
    // the LLM counters are untouched: runs are not LLM requests
    expect(usage.totals.requests).toBe(0);
  });
});

describe("a busy /run_code server", () => {
  it("is paused, not ejected, when it answers 503 with Retry-After; a 500 without counts towards ejection", async () => {
    const busy = await refusingServer(503, 3600);
    const broken = await refusingServer(500);
    const ok = await runCodeServer(5);
    const usage = new UsageMeter();
    const c = client([busy.url, broken.url, ok.url], {
      workers: 1,
      balance: { eject_after: 1, eject_s: 60 },
    });
    const results = await Promise.all(
      programs(6).map((code) => c.run({ code, language: "python" }, { usage })),
    );
    expect(results.every((r) => r.status === "Success")).toBe(true);
    expect(busy.count()).toBe(1);
    expect(broken.count()).toBe(1);
    expect(usage.totals.endpoints?.[`${busy.url}/run_code`]).toMatchObject({ failures: 1, ejections: 0 });
    expect(usage.totals.endpoints?.[`${broken.url}/run_code`]).toMatchObject({ failures: 1, ejections: 1 });
  }, 300_000);
});
