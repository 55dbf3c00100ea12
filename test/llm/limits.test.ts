// The limits a role puts on what it sends, seen from the test server: concurrency, the requests/min
// and tokens/min budgets, and the pause a 429 with Retry-After imposes on the whole endpoint. Times
// are only ever lower bounds the client must respect (when the server first saw a request), never
// how fast anything went.
import { describe, expect, it } from "vitest";
import { UsageMeter } from "../../pipeline/usage.js";
import { failFirst, type ReceivedRequest } from "../support/llm-server.js";
import { ask, serverPerTest, testConfig, testService } from "./helpers.js";

const t = serverPerTest({ rules: [{ match: /.*/, reply: "ok" }] });

/** Milliseconds from `since` to the arrival of the n-th request (1-based) at the server. */
const arrival = (n: number, since: number) => t.server.requests[n - 1]!.at - since;

describe("LLM client: limits", () => {
  it("keeps at most `concurrency` requests in flight, across clients of the same role", async () => {
    t.server.options.latencyMs = 20;
    const service = testService(testConfig(t.server.url, { concurrency: 3 }), t.dir);
    const a = service.client("scorer", new UsageMeter());
    const b = service.client("scorer", new UsageMeter());
    await Promise.all(Array.from({ length: 24 }, (_, i) => (i % 2 ? a : b).chat(ask(`q${i}`))));
    expect(t.server.count).toBe(24);
    expect(t.server.maxInFlight).toBe(3);
    await service.close();
  });

  it("sends no more than requests_per_minute allows: a minute's worth at once, then one per refill", async () => {
    // 120/min: the bucket holds 120 requests and refills one every 500 ms.
    const config = testConfig(t.server.url, { concurrency: 200, requests_per_minute: 120 });
    const start = performance.now();
    const service = testService(config, t.dir);
    const client = service.client("scorer", new UsageMeter());
    await Promise.all(Array.from({ length: 122 }, (_, i) => client.chat(ask(`r${i}`))));
    expect(t.server.count).toBe(122);
    // By time t the budget has let through at most 120 + t / 500 ms requests.
    expect(arrival(121, start)).toBeGreaterThanOrEqual(495);
    expect(arrival(122, start)).toBeGreaterThanOrEqual(995);
    await service.close();
  });

  it("charges tokens_per_minute with the tokens the server reports, not just the reservation", async () => {
    // Each request reserves its prompt (~10 tokens) plus max_tokens (5), but the server reports a
    // 1,000-token answer: the budget of 12,000/min (200 a second) pays for the real count.
    t.server.options.rules = [{ match: /.*/, reply: "x".repeat(4000) }];
    const config = testConfig(t.server.url, {
      concurrency: 1,
      tokens_per_minute: 12_000,
      sampling: { max_tokens: 5 },
    });
    const start = performance.now();
    const service = testService(config, t.dir);
    const client = service.client("scorer", new UsageMeter());
    const usage: number[] = [];
    for (let i = 0; i < 13; i++) {
      const answer = await client.chat(ask(`t${i}`));
      usage.push(answer.usage.promptTokens + answer.usage.completionTokens);
    }
    expect(t.server.count).toBe(13);
    // Requests 1-12 spend what the server reported; request 13 must wait until the bucket has
    // refilled enough for its reservation at 200 tokens a second.
    const spent = usage.slice(0, 12).reduce((a, b) => a + b, 0);
    expect(spent).toBeGreaterThan(12_000);
    const debtMs = ((spent - 12_000) / 200) * 1000;
    expect(arrival(13, start)).toBeGreaterThanOrEqual(debtMs - 5);
    await service.close();
  });

  it("waits as long as Retry-After says before trying again", async () => {
    t.server.options.fault = failFirst(1, { type: "rate-limit", retryAfterMs: 150 });
    const service = testService(testConfig(t.server.url, { backoff_s: 0.001 }), t.dir);
    await service.client("scorer", new UsageMeter()).chat(ask("hello"));
    expect(t.server.count).toBe(2);
    expect(t.server.requests[1]!.at - t.server.requests[0]!.at).toBeGreaterThanOrEqual(145);
    await service.close();
  });

  it("pauses the whole endpoint after a 429 with Retry-After, not just the request that got it", async () => {
    // Only the very first request is refused; the others were never refused themselves.
    t.server.options.fault = (request: ReceivedRequest) =>
      request.n === 1 ? { type: "rate-limit", retryAfterMs: 300 } : undefined;
    const service = testService(testConfig(t.server.url, { concurrency: 1, backoff_s: 0.001 }), t.dir);
    const client = service.client("scorer", new UsageMeter());
    await Promise.all(["p0", "p1", "p2"].map((q) => client.chat(ask(q))));
    expect(t.server.count).toBe(4);
    const refused = t.server.requests[0]!;
    // The slot was free again as soon as the 429 came back; nothing went out before the pause ended.
    for (const later of t.server.requests.slice(1)) expect(later.at - refused.at).toBeGreaterThanOrEqual(295);
    await service.close();
  });
});
