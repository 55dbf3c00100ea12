// A cache a user already has must still answer: the key recipes and the tables are pinned here as
// they were when both caches opened SQLite themselves. The files are written by hand with plain SQL,
// not by the caches, so a change to how the caches write cannot hide a change to what they read.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { beforeEach, describe, expect, it } from "vitest";
import { EmbeddingCache, embeddingKey } from "../../pipeline/embed/cache.js";
import { cacheKey, ResponseCache } from "../../pipeline/llm/cache.js";
import { tempDir } from "../support/temp-dir.js";

let dir: string;
beforeEach(() => {
  dir = tempDir("cache-format-");
});

const REVIEW = [
  { role: "system" as const, content: "You review code." },
  { role: "user" as const, content: "Is `x = x + 1` idiomatic?" },
];

describe("the cache keys", () => {
  it("are the same SHA-256 recipes as before", () => {
    expect(cacheKey("tiny-coder", REVIEW, { temperature: 0.2, max_tokens: 64 }).toString("hex")).toBe(
      "cdc6c44dd1afe473af3ca48b4c985276160843b19e641abae98bfc35c204353b",
    );
    expect(
      cacheKey(
        "tiny-coder",
        [{ role: "user", content: "Score it." }],
        { temperature: 0 },
        "grammar:score",
      ).toString("hex"),
    ).toBe("4e217ead9dbc0b11923bde2a735f7712793a66a14b80023c035084fc16a4aa6b");
    expect(embeddingKey("bge-small", "def add(a, b): return a + b").toString("hex")).toBe(
      "1d3f22df8d65c352653c3b7c5851ad1ff6cc061554c9e8a667d94297d47d5d20",
    );
  });
});

describe("a response cache file written before", () => {
  function writeOld(path: string, key: Buffer): void {
    const db = new Database(path);
    db.exec(`CREATE TABLE responses (
      key BLOB PRIMARY KEY, model TEXT NOT NULL, content TEXT NOT NULL, finish_reason TEXT,
      prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, created_at INTEGER NOT NULL
    ) WITHOUT ROWID`);
    db.prepare("INSERT INTO responses VALUES (?, ?, ?, ?, ?, ?, ?)").run(
      key,
      "tiny-coder-q4",
      "Yes; `x += 1` reads better.",
      "stop",
      21,
      9,
      1_700_000_000_000,
    );
    db.close();
  }

  it("answers from the file it opens and from the files it only reads", () => {
    const key = cacheKey("tiny-coder", REVIEW, { temperature: 0.2, max_tokens: 64 });
    const expected = {
      content: "Yes; `x += 1` reads better.",
      model: "tiny-coder-q4",
      finishReason: "stop",
      promptTokens: 21,
      completionTokens: 9,
    };
    writeOld(join(dir, "own.sqlite"), key);
    writeOld(join(dir, "other.sqlite"), key);
    const own = new ResponseCache(join(dir, "own.sqlite"));
    expect(own.get(key)).toEqual(expected);
    own.close();
    const reading = new ResponseCache(join(dir, "new.sqlite"), { readAlso: [join(dir, "other.sqlite")] });
    expect(reading.has(key)).toBe(true);
    expect(reading.get(key)).toEqual(expected);
    reading.close();
  });

  it("answers nothing from a file to read that is missing or not a cache, and goes on", () => {
    writeFileSync(join(dir, "junk.sqlite"), "not a database\n".repeat(20));
    const cache = new ResponseCache(join(dir, "own.sqlite"), {
      readAlso: [join(dir, "missing.sqlite"), join(dir, "junk.sqlite")],
    });
    const key = cacheKey("tiny-coder", REVIEW, {});
    expect(cache.get(key)).toBeUndefined();
    cache.put(key, { content: "a", model: "m", finishReason: null, promptTokens: 1, completionTokens: 1 });
    expect(cache.get(key)?.content).toBe("a");
    cache.close();
  });
});

describe("an embedding cache file written before", () => {
  it("gives back the vector, the token count and the truncation flag", () => {
    const path = join(dir, "embeddings.sqlite");
    const key = embeddingKey("bge-small", "def add(a, b): return a + b");
    const vector = new Float32Array([0.6, 0.8, 0]);
    const db = new Database(path);
    db.exec(`CREATE TABLE embeddings (
      key BLOB PRIMARY KEY, model TEXT NOT NULL, dim INTEGER NOT NULL, vector BLOB NOT NULL,
      tokens INTEGER, truncated INTEGER NOT NULL
    ) WITHOUT ROWID`);
    db.prepare("INSERT INTO embeddings VALUES (?, ?, ?, ?, ?, ?)").run(
      key,
      "bge-small",
      3,
      Buffer.from(vector.buffer),
      12,
      1,
    );
    db.close();
    const cache = new EmbeddingCache(path);
    const found = cache.get(key)!;
    expect([...found.vector]).toEqual([...vector]);
    expect(found.tokens).toBe(12);
    expect(found.truncated).toBe(true);
    cache.close();
  });
});
