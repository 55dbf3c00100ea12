import { copyFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { NotConfiguredError, UserError } from "../../pipeline/errors.js";
import { cacheKey, ResponseCache } from "../../pipeline/llm/cache.js";
import { cachePath } from "../../pipeline/llm/index.js";
import { loadPrompt } from "../../pipeline/llm/prompts.js";
import type { ChatMessage } from "../../pipeline/llm/types.js";
import type { RoundScore } from "../../stages/filter/complexity.js";
import { filterConfigSchema } from "../../stages/filter/config.js";
import { serverPerTest } from "../llm/helpers.js";
import { type Fault, faultRate } from "../support/llm-server.js";
import { fakeRun, llmConfig, record, scripted } from "./helpers.js";

const t = serverPerTest({}, "cf-filter-");

const scoresOf = (r: object | undefined) =>
  (((r as { complexity?: RoundScore[] } | undefined)?.complexity as RoundScore[] | undefined) ?? []).map(
    (s) => s.score,
  );

describe("filter: the paper's two rounds", () => {
  it("keeps 4-5 of round 1, rescores them with round 2, keeps 4-5 again", async () => {
    t.server.options.fallback = scripted({
      hard: { r1: "Score: 5\nIt needs a new algorithm.", r2: "**4 Points** - Advanced: performance work." },
      easy: { r1: "2 Points - Basic: a loop." },
      mid: { r1: "I would rate this query a 4.", r2: "Score: 3\nDynamic programming." },
    });
    const input = [
      record("a", "hard"),
      record("b", "easy", { resource: "codealpaca", lang: "java" }),
      record("c", "mid"),
    ];
    const run = fakeRun({ dataDir: t.dir, llm: llmConfig(t.server.url), input });
    await run.processAll();

    const kept = run.outcomes.get("a")!.out![0]!;
    expect(kept).toMatchObject({
      id: "a",
      query: "hard",
      answer: "answer of a",
      resource: "evolinstruct",
      lang: "python",
    });
    const complexity = kept.complexity as RoundScore[];
    expect(complexity).toEqual([
      {
        round: 1,
        prompt: "complexity-1",
        score: 5,
        rationale: "Score: 5\nIt needs a new algorithm.",
        reminded: false,
      },
      {
        round: 2,
        prompt: "complexity-2",
        score: 4,
        rationale: "**4 Points** - Advanced: performance work.",
        reminded: false,
      },
    ]);

    const easy = run.outcomes.get("b")!.rejects![0]!;
    expect(easy.reason).toBe("complexity-below-threshold");
    expect(scoresOf(easy.record as object)).toEqual([2]);
    expect(easy.detail).toContain("round 1 (complexity-1): 2");
    expect((easy.record as { complexity: RoundScore[] }).complexity[0]!.rationale).toContain("a loop");

    const mid = run.outcomes.get("c")!.rejects![0]!;
    expect(mid.reason).toBe("complexity-below-threshold");
    expect(scoresOf(mid.record as object)).toEqual([4, 3]);
    expect(mid.detail).toContain("round 2 (complexity-2): 3");

    // Round 2 only for round-1 survivors: 3 + 2 requests, each prompt exactly the paper's.
    expect(t.server.count).toBe(5);
    const sent = t.server.requests.map((r) => r.body.messages[0]!.content);
    expect(sent).toContain(loadPrompt("complexity-1").render({ query: "easy" }));
    expect(sent).toContain(loadPrompt("complexity-2").render({ query: "hard" }));
    expect(sent.filter((s) => s.includes("[easy]"))).toHaveLength(1);
    expect(t.server.requests[0]!.body.model).toBe("test-scorer");
    expect(t.server.requests[0]!.body.temperature).toBe(0);
    await run.close();
  });

  it("scores every record with every prompt under the `every` rule", async () => {
    t.server.options.fallback = scripted({
      easy: { r1: "Score: 2", r2: "Score: 5" },
      hard: { r1: "5", r2: "5" },
    });
    const run = fakeRun({
      dataDir: t.dir,
      llm: llmConfig(t.server.url),
      filter: { rule: "every" },
      input: [record("a", "easy"), record("b", "hard")],
    });
    await run.processAll();
    expect(scoresOf(run.outcomes.get("a")!.rejects![0]!.record as object)).toEqual([2, 5]);
    expect(scoresOf(run.outcomes.get("b")!.out![0])).toEqual([5, 5]);
    expect(t.server.count).toBe(4);
    await run.close();
  });

  it("follows the configured threshold and rounds", async () => {
    t.server.options.fallback = scripted({ mid: { r1: "Score: 3" } });
    const run = fakeRun({
      dataDir: t.dir,
      llm: llmConfig(t.server.url),
      filter: { threshold: 3, rounds: ["complexity-1"] },
      input: [record("a", "mid")],
    });
    await run.processAll();
    expect(scoresOf(run.outcomes.get("a")!.out![0])).toEqual([3]);
    expect(t.server.count).toBe(1);
    await run.close();
  });
});

describe("filter: answers without a score", () => {
  it("asks once more with a reminder, in the same conversation", async () => {
    t.server.options.fallback = scripted({
      vague: { r1: "This query is about graphs and needs care.", r1again: "Score: 4", r2: "5" },
    });
    const run = fakeRun({ dataDir: t.dir, llm: llmConfig(t.server.url), input: [record("a", "vague")] });
    await run.processAll();
    const kept = run.outcomes.get("a")!.out![0]!;
    expect(kept.complexity).toMatchObject([
      { score: 4, reminded: true, rationale: "Score: 4" },
      { score: 5, reminded: false },
    ]);
    const reminder = t.server.requests[1]!.body.messages;
    expect(reminder.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(reminder[1]!.content).toBe("This query is about graphs and needs care.");
    expect(reminder[2]!.content).toBe(filterConfigSchema.parse({}).reminder);
    await run.close();
  });

  it("records an answer that stays unreadable as `unscored`, with the raw text, never as a score", async () => {
    t.server.options.fallback = scripted({
      vague: { r1: "Interesting question!", r1again: "It is somewhere between 3 and 4." },
    });
    const run = fakeRun({ dataDir: t.dir, llm: llmConfig(t.server.url), input: [record("a", "vague")] });
    await run.processAll();
    const reject = run.outcomes.get("a")!.rejects![0]!;
    expect(reject.reason).toBe("unscored");
    expect(reject.detail).toContain("Interesting question!");
    expect(reject.detail).toContain("between 3 and 4");
    expect((reject.record as { complexity: RoundScore[] }).complexity[0]).toMatchObject({
      score: null,
      answers: ["Interesting question!", "It is somewhere between 3 and 4."],
    });
    expect(t.server.count).toBe(2);
    await run.close();
  });

  it("rejects a record without a query, sending nothing", async () => {
    const run = fakeRun({ dataDir: t.dir, llm: llmConfig(t.server.url), input: [record("a", "  ")] });
    await run.processAll();
    expect(run.outcomes.get("a")!.rejects![0]!.reason).toBe("empty-query");
    expect(t.server.count).toBe(0);
    await run.close();
  });
});

describe("filter: failures", () => {
  it("loses no record under injected faults, and records every failure with its reason", async () => {
    const faults: Fault[] = [
      { type: "status", status: 500 },
      { type: "rate-limit", retryAfterMs: 5 },
      { type: "hang" },
      { type: "malformed" },
      { type: "empty-choices" },
      { type: "drop" },
    ];
    t.server.options.fault = faultRate(0.45, faults, 7);
    const input = Array.from({ length: 60 }, (_, i) => record(`r${i}`, `query number ${i}`));
    const llm = llmConfig(t.server.url, { retries: 1, timeout_s: 0.25 });
    const run = fakeRun({ dataDir: t.dir, llm, input });
    await run.processAll(input, 16);
    const outcomes = [...run.outcomes.values()];
    expect(run.outcomes.size).toBe(60);
    const failed = outcomes.filter((o) => o.failed);
    const done = outcomes.filter((o) => !o.failed);
    for (const o of done) expect((o.out?.length ?? 0) + (o.rejects?.length ?? 0)).toBe(1);
    expect(failed.length).toBeGreaterThan(0);
    for (const o of failed) {
      expect(o.failed!.reason).toMatch(
        /^llm-(server-error|rate-limited|timeout|malformed-response|empty-choices|connection)$/,
      );
      expect(o.failed!.detail).toContain("after 2 attempts");
    }
    expect(run.usage.totals.failedRequests).toBeGreaterThan(0);
    await run.close();

    // The next run retries only the failed records, and the answers already paid for are replayed.
    // What the client received (and so paid for) is exactly what its cache holds after the run.
    const snapshot = `${t.dir}/after-run-1.sqlite`;
    copyFileSync(cachePath(llm, t.dir), snapshot);
    const cache = new ResponseCache(snapshot);
    const paidFor = (messages: ChatMessage[]) =>
      cache.has(cacheKey("test-scorer", messages, llm.scorer.sampling));
    t.server.options.fault = undefined;
    t.server.reset();
    const again = fakeRun({ dataDir: t.dir, llm, input });
    const retry = input.filter((r) => run.outcomes.get(r.id)!.failed);
    await again.processAll(retry);
    for (const r of retry) expect(again.outcomes.get(r.id)!.failed).toBeUndefined();
    expect(t.server.count).toBeGreaterThan(0);
    for (const request of t.server.requests)
      expect(paidFor(request.body.messages as ChatMessage[])).toBe(false);
    cache.close();
    await again.close();
  });

  it("rejects a query the model cannot take (context length), and does not retry it", async () => {
    t.server.options.fault = () => ({
      type: "status",
      status: 400,
      message: "This model's maximum context length is 8192 tokens, however you requested 9000 tokens",
    });
    const run = fakeRun({ dataDir: t.dir, llm: llmConfig(t.server.url), input: [record("a", "long")] });
    await run.processAll();
    expect(run.outcomes.get("a")!.rejects![0]!.reason).toBe("query-too-long");
    expect(t.server.count).toBe(1);
    await run.close();
  });

  it("stops the run when the key is refused", async () => {
    t.server.options.requireKey = "sk-right";
    const run = fakeRun({ dataDir: t.dir, llm: llmConfig(t.server.url), input: [record("a", "q")] });
    await expect(run.processAll()).rejects.toBeInstanceOf(UserError);
    await run.close();
  });

  it("stops the run with the recipe when the scorer has no endpoint", async () => {
    const run = fakeRun({ dataDir: t.dir, llm: llmConfig(undefined), input: [record("a", "q")] });
    const error = await run.processAll().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotConfiguredError);
    expect((error as Error).message).toContain("OPENAI_BASE_URL");
    await run.close();
  });

  it("marks a record interrupted while it waited as failed, to be redone", async () => {
    t.server.options.fault = () => ({ type: "status", status: 500 });
    const controller = new AbortController();
    const run = fakeRun({
      dataDir: t.dir,
      llm: llmConfig(t.server.url, { backoff_s: 3600, max_backoff_s: 3600 }),
      input: [record("a", "q")],
      signal: controller.signal,
    });
    const pending = run.processAll();
    while (t.server.count < 1) await new Promise((r) => setTimeout(r, 5));
    controller.abort();
    await pending;
    expect(run.outcomes.get("a")!.failed!.reason).toBe("interrupted");
    await run.close();
  });
});
