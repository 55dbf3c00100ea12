// The path both providers share (HTTP endpoint and embedded model): what a backend's `send` sees and
// when, with a real cache file. The providers' own tests (client, llm-embedded) cover it end to end.
import { join } from "node:path";
import pLimit from "p-limit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type CachedAnswer, ResponseCache } from "../../pipeline/llm/cache.js";
import { CachedCalls, type UncachedCall } from "../../pipeline/llm/cached-call.js";
import { LlmAbortedError } from "../../pipeline/llm/errors.js";
import { UsageMeter } from "../../pipeline/usage.js";
import { tempDir } from "../support/temp-dir.js";
import { ask } from "./helpers.js";

let dir: string;
let cache: ResponseCache;
beforeEach(() => {
  dir = tempDir("cf-cached-call-");
  cache = new ResponseCache(join(dir, "llm-cache.sqlite"));
});
afterEach(() => {
  cache.close();
});

function calls(options: { noCache?: boolean; priced?: boolean } = {}): CachedCalls {
  return new CachedCalls({
    role: "coder",
    model: "tiny-coder",
    sampling: { temperature: 0.2 },
    cache,
    noCache: options.noCache ?? false,
    price: options.priced ? { prompt: 2, completion: 10 } : undefined,
  });
}

const answer = (content: string): CachedAnswer => ({
  content,
  model: "tiny-coder-q4",
  finishReason: "stop",
  promptTokens: 100_000,
  completionTokens: 20_000,
});

describe("CachedCalls", () => {
  it("sends what the cache cannot answer once, commits it, meters it, then answers from the cache", async () => {
    const path = calls({ priced: true });
    const usage = new UsageMeter();
    const limit = pLimit(1);
    const sent: UncachedCall[] = [];
    const send = (call: UncachedCall) => {
      sent.push(call);
      return path.commit(limit, call, async () => answer("use a list comprehension"));
    };
    const first = await path.chat(ask("Shorten this loop."), { max_tokens: 32 }, usage, send);
    expect(first).toMatchObject({
      content: "use a list comprehension",
      cached: false,
      model: "tiny-coder-q4",
    });
    expect(sent).toHaveLength(1);
    expect(sent[0]!.sampling).toEqual({ temperature: 0.2, max_tokens: 32 });
    expect(cache.get(sent[0]!.key)?.content).toBe("use a list comprehension");
    expect(usage.totals).toMatchObject({
      promptTokens: 100_000,
      completionTokens: 20_000,
      cachedRequests: 0,
    });
    expect(usage.totals.costUsd).toBeCloseTo(0.2 + 0.2);

    const again = await path.chat(ask("Shorten this loop."), { max_tokens: 32 }, usage, send);
    expect(again).toMatchObject({ content: "use a list comprehension", cached: true });
    expect(sent).toHaveLength(1);
    expect(usage.totals).toMatchObject({ cachedRequests: 1, promptTokens: 100_000 });
  });

  it("sends identical requests in flight once; the joiners count as cached", async () => {
    const path = calls();
    const usage = new UsageMeter();
    let sends = 0;
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const send = (call: UncachedCall) => {
      sends++;
      return path.commit(pLimit(4), call, async () => {
        await gate;
        return answer("one answer");
      });
    };
    const pending = [1, 2, 3].map(() => path.chat(ask("Same question."), undefined, usage, send));
    release();
    const results = await Promise.all(pending);
    expect(sends).toBe(1);
    expect(results.map((r) => r.cached)).toEqual([false, true, true]);
    expect(usage.totals.cachedRequests).toBe(2);
  });

  it("holds the slot until the answer is on disk: the next request starts only after the commit", async () => {
    const path = calls();
    const limit = pLimit(1);
    const keys: Buffer[] = [];
    const onDiskWhenNextStarted: boolean[] = [];
    const send = (call: UncachedCall) =>
      path.commit(limit, call, async () => {
        if (keys.length > 0) onDiskWhenNextStarted.push(cache.has(keys[keys.length - 1]!));
        keys.push(call.key);
        return answer(`answer ${keys.length}`);
      });
    const usage = new UsageMeter();
    await Promise.all([
      path.chat(ask("first"), undefined, usage, send),
      path.chat(ask("second"), undefined, usage, send),
      path.chat(ask("third"), undefined, usage, send),
    ]);
    expect(onDiskWhenNextStarted).toEqual([true, true]);
  });

  it("asks again under --no-cache or a call's noCache, and the new answer replaces the stored one", async () => {
    const usage = new UsageMeter();
    let n = 0;
    const sendWith = (path: CachedCalls) => (call: UncachedCall) =>
      path.commit(pLimit(1), call, async () => answer(`answer ${++n}`));
    const path = calls();
    await path.chat(ask("q"), undefined, usage, sendWith(path));
    expect((await path.chat(ask("q"), { noCache: true }, usage, sendWith(path))).content).toBe("answer 2");
    const fresh = calls({ noCache: true });
    expect((await fresh.chat(ask("q"), undefined, usage, sendWith(fresh))).content).toBe("answer 3");
    expect((await path.chat(ask("q"), undefined, usage, sendWith(path))).content).toBe("answer 3");
  });

  it("meters and stores nothing when the backend fails, and a caller that gives up stops alone", async () => {
    const path = calls();
    const usage = new UsageMeter();
    const failing = (call: UncachedCall) =>
      path.commit(pLimit(1), call, async () => {
        throw new Error("the model could not load");
      });
    await expect(path.chat(ask("q"), undefined, usage, failing)).rejects.toThrow(/could not load/);
    expect(cache.count()).toBe(0);
    expect(usage.totals.promptTokens).toBe(0);

    const stop = new AbortController();
    stop.abort();
    await expect(path.chat(ask("q"), { signal: stop.signal }, usage, failing)).rejects.toBeInstanceOf(
      LlmAbortedError,
    );
  });
});
