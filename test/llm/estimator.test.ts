// Estimates for `run --dry-run`: from the config and the response cache, with or without an
// endpoint, and sending nothing.
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { NotConfiguredError } from "../../pipeline/errors.js";
import { cachePath } from "../../pipeline/llm/index.js";
import { UsageMeter } from "../../pipeline/usage.js";
import { ask, serverPerTest, testConfig, testService } from "./helpers.js";

const t = serverPerTest({ rules: [{ match: /hello/, reply: "hi there" }] });

describe("LLM estimator", () => {
  it("estimates a request without sending it, and knows what is cached", async () => {
    const service = testService(testConfig(t.server.url), t.dir);
    const estimator = service.estimator("scorer");
    const before = estimator.estimate(ask("hello"));
    expect(before.cached).toBe(false);
    expect(before.promptTokens).toBeGreaterThan(0);
    expect(before.completionTokens).toBe(512);
    expect(estimator.estimate(ask("hello"), { expectedCompletionTokens: 100 }).completionTokens).toBe(100);
    await service.client("scorer", new UsageMeter()).chat(ask("hello"));
    expect(estimator.estimate(ask("hello")).cached).toBe(true);
    expect(estimator.peek(ask("hello"))?.content).toBe("hi there");
    // Another sampling parameter is another request.
    expect(estimator.estimate(ask("hello"), { temperature: 0.9 }).cached).toBe(false);
    expect(t.server.count).toBe(1);
    await service.close();
  });

  it("prices the estimate from llm.prices", async () => {
    const config = testConfig(
      t.server.url,
      {},
      { prices: { "test-model": { prompt: 1e6, completion: 2e6 } } },
    );
    const service = testService(config, t.dir);
    const e = service.estimator("scorer").estimate(ask("hello"), { expectedCompletionTokens: 10 });
    expect(e.costUsd).toBe(e.promptTokens + 2 * 10);
    await service.close();
  });

  it("consults the cache without an endpoint: the key is model, messages and sampling", async () => {
    const answered = testService(testConfig(t.server.url), t.dir);
    await answered.client("scorer", new UsageMeter()).chat(ask("hello"));
    await answered.close();

    // The same role with no base URL and no environment: it cannot send, but it can estimate.
    const offline = testService(testConfig(undefined), t.dir);
    expect(() => offline.client("scorer", new UsageMeter())).toThrow(NotConfiguredError);
    const estimator = offline.estimator("scorer");
    expect(estimator.estimate(ask("hello")).cached).toBe(true);
    expect(estimator.peek(ask("hello"))?.content).toBe("hi there");
    expect(estimator.estimate(ask("hello again")).cached).toBe(false);
    await offline.close();

    // --no-cache would send everything again, so nothing counts as cached.
    const bypass = testService(testConfig(undefined), t.dir, { noCache: true });
    expect(bypass.estimator("scorer").estimate(ask("hello")).cached).toBe(false);
    expect(bypass.estimator("scorer").peek(ask("hello"))).toBeUndefined();
    await bypass.close();
    expect(t.server.count).toBe(1);
  });

  it("creates no cache file when there is none yet, and refuses an unknown role", async () => {
    const config = testConfig(undefined);
    const service = testService(config, t.dir);
    expect(service.estimator("scorer").estimate(ask("hello")).cached).toBe(false);
    expect(existsSync(cachePath(config, t.dir))).toBe(false);
    expect(() => service.estimator("judge")).toThrow(/scorer, weak, strong/);
    await service.close();
  });
});
