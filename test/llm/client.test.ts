import { describe, expect, it } from "vitest";
import { UserError } from "../../pipeline/errors.js";
import { LlmAbortedError, LlmRequestError } from "../../pipeline/llm/errors.js";
import { UsageMeter } from "../../pipeline/usage.js";
import { failFirst } from "../support/llm-server.js";
import { ask, recordingLogger, serverPerTest, testConfig, testService } from "./helpers.js";

const t = serverPerTest({ rules: [{ match: /hello/, reply: "hi there" }] });

describe("LLM client: answers and the response cache", () => {
  it("answers, counts usage, and never sends an answered request again", async () => {
    const service = testService(testConfig(t.server.url), t.dir);
    const usage = new UsageMeter();
    const client = service.client("scorer", usage);
    const first = await client.chat(ask("hello"));
    expect(first).toMatchObject({
      content: "hi there",
      cached: false,
      model: "test-model",
      finishReason: "stop",
    });
    expect(first.usage.promptTokens).toBeGreaterThan(0);
    const again = await client.chat(ask("hello"));
    expect(again).toMatchObject({ content: "hi there", cached: true });
    expect(t.server.count).toBe(1);
    expect(usage.totals).toMatchObject({ requests: 1, cachedRequests: 1, failedRequests: 0 });
    expect(usage.totals.promptTokens).toBe(first.usage.promptTokens);
    await service.close();

    // A new process (a rerun, or after a crash) finds the answer on disk.
    const reopened = testService(testConfig(t.server.url), t.dir);
    const later = await reopened.client("scorer", new UsageMeter()).chat(ask("hello"));
    expect(later).toMatchObject({ content: "hi there", cached: true });
    expect(t.server.count).toBe(1);
    await reopened.close();
  });

  it("reads server-sent events, usage included", async () => {
    const service = testService(testConfig(t.server.url, { stream: true }), t.dir);
    const usage = new UsageMeter();
    const answer = await service.client("scorer", usage).chat(ask("hello"));
    expect(answer).toMatchObject({ content: "hi there", cached: false, finishReason: "stop" });
    expect(t.server.requests[0]!.body.stream).toBe(true);
    // The server's own count, not our estimate: "hi there" is 8 characters, 2 tokens by its rule.
    expect(answer.usage.completionTokens).toBe(2);
    expect(usage.totals.completionTokens).toBe(2);
    await service.close();
  });

  it("estimates tokens when the server reports no usage", async () => {
    t.server.options.rules = [{ match: /.*/, reply: { content: "four", usage: false } }];
    const service = testService(testConfig(t.server.url), t.dir);
    const answer = await service.client("scorer", new UsageMeter()).chat(ask("hello"));
    expect(answer.usage.completionTokens).toBe(1);
    expect(answer.usage.promptTokens).toBeGreaterThan(0);
    await service.close();
  });

  it("keys the cache on model, messages and sampling parameters", async () => {
    const service = testService(testConfig(t.server.url), t.dir);
    const client = service.client("scorer", new UsageMeter());
    await client.chat(ask("hello"));
    await client.chat(ask("hello again"));
    await client.chat(ask("hello"), { temperature: 0.5 });
    await client.chat(ask("hello"), { max_tokens: 7 });
    expect(t.server.count).toBe(4);
    expect(t.server.requests[2]!.body.temperature).toBe(0.5);
    await service.close();
    const otherModel = testService(testConfig(t.server.url, { model: "other-model" }), t.dir);
    await otherModel.client("scorer", new UsageMeter()).chat(ask("hello"));
    expect(t.server.count).toBe(5);
    await otherModel.close();
  });

  it("bypasses the cache with --no-cache, and stores the fresh answer", async () => {
    const first = testService(testConfig(t.server.url), t.dir);
    await first.client("scorer", new UsageMeter()).chat(ask("hello"));
    await first.close();
    t.server.options.rules = [{ match: /hello/, reply: "fresh" }];
    const bypass = testService(testConfig(t.server.url), t.dir, { noCache: true });
    const usage = new UsageMeter();
    expect((await bypass.client("scorer", usage).chat(ask("hello"))).content).toBe("fresh");
    expect(usage.totals.cachedRequests).toBe(0);
    await bypass.close();
    const after = testService(testConfig(t.server.url), t.dir);
    expect(await after.client("scorer", new UsageMeter()).chat(ask("hello"))).toMatchObject({
      content: "fresh",
      cached: true,
    });
    expect(t.server.count).toBe(2);
    await after.close();
  });

  it("adds the price table's cost to the meter", async () => {
    const config = testConfig(
      t.server.url,
      {},
      { prices: { "test-model": { prompt: 1_000_000, completion: 0 } } },
    );
    const service = testService(config, t.dir);
    const usage = new UsageMeter();
    const answer = await service.client("scorer", usage).chat(ask("hello"));
    expect(usage.totals.costUsd).toBe(answer.usage.promptTokens);
    await service.close();
  });
});

describe("LLM client: faults and retries", () => {
  const faults = [
    ["a 500", { type: "status", status: 500 }, "server-error"],
    ["a 503", { type: "status", status: 503 }, "server-error"],
    ["a 429", { type: "rate-limit" }, "rate-limited"],
    ["a hang past the timeout", { type: "hang" }, "timeout"],
    ["a body that never ends", { type: "hang-body" }, "timeout"],
    ["an event stream that never ends, to a plain request", { type: "hang-events" }, "timeout"],
    ["a body that is not JSON", { type: "malformed" }, "malformed-response"],
    ["empty choices", { type: "empty-choices" }, "empty-choices"],
    ["a dropped connection", { type: "drop" }, "connection"],
  ] as const;

  it.each(faults)("retries after %s and gets the answer", async (_name, fault, kind) => {
    t.server.options.fault = failFirst(2, fault);
    const log = recordingLogger();
    const service = testService(testConfig(t.server.url, { timeout_s: 0.3 }), t.dir, { log });
    const usage = new UsageMeter();
    const answer = await service.client("scorer", usage).chat(ask("hello"));
    expect(answer.content).toBe("hi there");
    expect(t.server.count).toBe(3);
    expect(usage.totals).toMatchObject({ requests: 3, failedRequests: 2 });
    await service.close();
    expect(log.lines.join("\n")).toContain(`${kind} x2`);
  });

  // (a server that never answered at all stops the run instead: unreachable.test.ts)
  it.each(faults)("gives up after the last retry on %s, saying why", async (_name, fault, kind) => {
    const service = testService(testConfig(t.server.url, { timeout_s: 0.3, retries: 2 }), t.dir);
    const client = service.client("scorer", new UsageMeter());
    await client.chat(ask("hello, warm up"));
    t.server.options.fault = () => fault;
    const error = await client.chat(ask("hello")).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmRequestError);
    expect((error as LlmRequestError).reason).toBe(`llm-${kind}`);
    expect((error as LlmRequestError).attempts).toBe(3);
    expect(t.server.count).toBe(4);
    await service.close();
  });

  it("takes any timeout_s, not only whole milliseconds", async () => {
    t.server.options.fault = failFirst(1, { type: "hang" });
    const service = testService(testConfig(t.server.url, { timeout_s: 0.3001 }), t.dir);
    const answer = await service.client("scorer", new UsageMeter()).chat(ask("hello"));
    expect(answer.content).toBe("hi there");
    expect(t.server.count).toBe(2);
    await service.close();
  });

  it("does not quote an unparseable body in its error: it may hold a key", async () => {
    const key = "sk-live-0123456789abcdef";
    t.server.options.fault = () => ({ type: "malformed", body: `{"echo": Bearer ${key}}` });
    const service = testService(testConfig(t.server.url, { retries: 0 }), t.dir);
    const error = await service
      .client("scorer", new UsageMeter())
      .chat(ask("hello"))
      .catch((e: unknown) => e);
    expect((error as LlmRequestError).reason).toBe("llm-malformed-response");
    expect(String((error as Error).message)).not.toContain("sk-");
    await service.close();
  });

  const streamFaults = [
    ["a 502", { type: "status", status: 502 }, "server-error"],
    ["a stream that stops mid-answer", { type: "hang-body" }, "timeout"],
    ["an event that is not JSON", { type: "malformed" }, "malformed-response"],
    ["events without choices", { type: "empty-choices" }, "empty-choices"],
    ["a dropped connection", { type: "drop" }, "connection"],
  ] as const;

  it.each(streamFaults)("retries a stream after %s", async (_name, fault, kind) => {
    t.server.options.fault = failFirst(1, fault);
    const log = recordingLogger();
    const service = testService(testConfig(t.server.url, { stream: true, timeout_s: 0.3 }), t.dir, { log });
    const answer = await service.client("scorer", new UsageMeter()).chat(ask("hello"));
    expect(answer.content).toBe("hi there");
    expect(t.server.count).toBe(2);
    expect(t.server.requests.every((r) => r.body.stream === true)).toBe(true);
    await service.close();
    expect(log.lines.join("\n")).toContain(`${kind} x1`);
  });

  it.each([400, 422])("does not retry a %i", async (status) => {
    t.server.options.fault = () => ({ type: "status", status });
    const service = testService(testConfig(t.server.url), t.dir);
    const error = await service
      .client("scorer", new UsageMeter())
      .chat(ask("hello"))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmRequestError);
    expect((error as LlmRequestError).attempts).toBe(1);
    expect(t.server.count).toBe(1);
    await service.close();
  });

  it("stops at once on a 404, pointing at the model name and the base URL", async () => {
    t.server.options.fault = () => ({
      type: "status",
      status: 404,
      message: "The model `test-model` does not exist",
    });
    const service = testService(testConfig(t.server.url), t.dir);
    const client = service.client("scorer", new UsageMeter());
    const error = await client.chat(ask("hello")).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UserError);
    expect((error as Error).message).toContain("llm.scorer.model");
    expect((error as Error).message).toContain("/v1");
    await expect(client.chat(ask("other"))).rejects.toBeInstanceOf(UserError);
    expect(t.server.count).toBe(1);
    await service.close();
  });

  it("stops waiting for a retry when the run is interrupted", async () => {
    t.server.options.fault = () => ({ type: "status", status: 500 });
    const service = testService(testConfig(t.server.url, { backoff_s: 3600, max_backoff_s: 3600 }), t.dir);
    const controller = new AbortController();
    const pending = service
      .client("scorer", new UsageMeter())
      .chat(ask("hello"), { signal: controller.signal });
    while (t.server.count < 1) await new Promise((r) => setTimeout(r, 5));
    controller.abort();
    await expect(pending).rejects.toBeInstanceOf(LlmAbortedError);
    expect(t.server.count).toBe(1);
    await service.close();
  });
});
