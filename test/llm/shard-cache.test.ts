// The response cache of a shard: a file of its own, which the one-process cache and shards of
// another N read; a file a live shard holds answers nothing instead of failing the lookup.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type CachedAnswer, cacheKey, openResponseCache, shardCachePath } from "../../pipeline/llm/cache.js";
import { tempDir } from "../support/temp-dir.js";

const answer = (content: string): CachedAnswer => ({
  content,
  model: "m",
  finishReason: "stop",
  promptTokens: 3,
  completionTokens: 1,
});
const key = (text: string) => cacheKey("m", [{ role: "user", content: text }], { temperature: 0 });

describe("per-shard response caches", () => {
  it("each shard writes its own file; other layouts read it, the same N's other shards do not", () => {
    const path = join(tempDir(), "llm-cache.sqlite");
    expect(shardCachePath(path, { index: 1, count: 4 })).toBe(
      join(path, "..", "llm-cache.shards", "1-of-4.sqlite"),
    );
    const shard1 = openResponseCache(path, { index: 1, count: 4 });
    shard1.put(key("paid by shard 1"), answer("one"));
    shard1.close();
    expect(existsSync(path)).toBe(false);

    const single = openResponseCache(path);
    expect(single.get(key("paid by shard 1"))?.content).toBe("one");
    expect(single.has(key("paid by shard 1"))).toBe(true);
    single.put(key("paid in one process"), answer("single"));
    single.close();

    const otherN = openResponseCache(path, { index: 0, count: 2 });
    expect(otherN.get(key("paid by shard 1"))?.content).toBe("one");
    expect(otherN.get(key("paid in one process"))?.content).toBe("single");
    otherN.close();

    const sibling = openResponseCache(path, { index: 2, count: 4 });
    expect(sibling.get(key("paid by shard 1"))).toBeUndefined();
    expect(sibling.get(key("paid in one process"))?.content).toBe("single");
    sibling.close();

    // a resumed shard reads what it paid for before
    const again = openResponseCache(path, { index: 1, count: 4 });
    expect(again.get(key("paid by shard 1"))?.content).toBe("one");
    again.close();
  });

  it("a shard's file held open by its live shard reads as a miss, not an error", () => {
    const path = join(tempDir(), "llm-cache.sqlite");
    const live = openResponseCache(path, { index: 0, count: 2 });
    live.put(key("in flight"), answer("live"));
    const single = openResponseCache(path);
    expect(single.get(key("in flight"))).toBeUndefined();
    live.close();
    single.close();
    const later = openResponseCache(path);
    expect(later.get(key("in flight"))?.content).toBe("live");
    later.close();
  });
});
