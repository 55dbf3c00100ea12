// The OpenAI-compatible embedder against a local server speaking the real /v1/embeddings protocol,
// through the `openai` SDK: batches, answers out of order, retried 503s, one refused input among
// many, a vector of the wrong length, and the cache that makes a rerun send nothing.
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { EmbeddingCache } from "../../pipeline/embed/cache.js";
import { openaiEmbedderSchema } from "../../pipeline/embed/config.js";
import { checkVector, embedTexts } from "../../pipeline/embed/embed-texts.js";
import { LexicalEmbedder } from "../../pipeline/embed/lexical.js";
import { OpenAIEmbedder } from "../../pipeline/embed/openai.js";
import type { Embedder } from "../../pipeline/embed/types.js";
import { NotConfiguredError } from "../../pipeline/errors.js";
import { type EmbeddingsServer, startEmbeddingsServer } from "../support/embeddings-server.js";
import { blackHole, freePort } from "../support/ports.js";
import { tempDir } from "../support/temp-dir.js";

const KEY = "sk-embed-test";
let server: EmbeddingsServer | undefined;
const dir = tempDir("cf-embed-openai-");
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const config = (over: Record<string, unknown> = {}) =>
  openaiEmbedderSchema.parse({ kind: "openai", model: "bge-test", batch_size: 3, retries: 3, ...over });

const TEXTS = [
  "sort a list of numbers",
  "reverse a string in python",
  "find the shortest path in a graph",
  "parse a json file",
  "this one is TOO LONG for the model",
  "count the words in a file",
  "a SHORT vector comes back",
];

describe("OpenAI-compatible embedder", () => {
  it("embeds in batches, refuses only the refused text, checks dimensions, and caches", async () => {
    server = await startEmbeddingsServer({
      dimension: 48,
      refuse: /TOO LONG/,
      wrongDimension: /SHORT/,
      failFirst: 2,
      requireKey: KEY,
    });
    const embedder = new OpenAIEmbedder(config({ base_url: server.url }), { OPENAI_API_KEY: KEY });
    const cache = new EmbeddingCache(path.join(dir, "a.sqlite"));
    const { outcomes, stats } = await embedTexts(TEXTS, embedder, cache);
    expect(outcomes.map((o) => (o.ok ? "ok" : o.reason))).toEqual([
      "ok",
      "ok",
      "ok",
      "ok",
      "embedding-refused",
      "ok",
      "embedding-wrong-dimension",
    ]);
    expect(outcomes[4]).toMatchObject({ detail: expect.stringMatching(/HTTP 400.*512 tokens/) });
    for (const o of outcomes) if (o.ok) expect(o.vector).toHaveLength(48);
    // batches by length; the refused batch was retried text by text; 503s were retried by the SDK
    expect(stats).toMatchObject({ texts: 7, computed: 7, problems: 2 });
    expect(server.requests.every((r) => r.length <= 3)).toBe(true);
    expect(server.requests.flat().filter((t) => t.includes("TOO LONG"))).toEqual([]);
    // the server answers `data` reversed: each vector must still be its own text's
    const words = new LexicalEmbedder({
      kind: "lexical",
      dimensions: 48,
      word_ngrams: [1],
      char_ngrams: [],
      batch_size: 1,
    });
    for (const [i, o] of outcomes.entries()) {
      if (!o.ok) continue;
      const expected = checkVector(words.vectorOf(TEXTS[i]!), 48) as Float32Array;
      for (let d = 0; d < 48; d++) expect(o.vector[d]).toBeCloseTo(expected[d]!, 6);
    }
    expect(server.requests.flat().sort()).toEqual(TEXTS.filter((t) => !t.includes("TOO LONG")).sort());

    const before = server.requests.length;
    const again = await embedTexts(TEXTS, embedder, cache);
    // the two unusable answers were never stored, so only they are asked again
    expect(again.stats).toMatchObject({ cached: 5, computed: 2 });
    expect(server.requests.slice(before).flat().sort()).toEqual(["a SHORT vector comes back"]);
    expect(again.outcomes[0]).toEqual(outcomes[0]);
    cache.close();
  });

  it("needs no endpoint when every vector is cached, and says how to configure one otherwise", async () => {
    server = await startEmbeddingsServer({ dimension: 16 });
    const cache = new EmbeddingCache(path.join(dir, "b.sqlite"));
    const online = new OpenAIEmbedder(config({ base_url: server.url }), {});
    await embedTexts(TEXTS.slice(0, 2), online, cache);
    const offline = new OpenAIEmbedder(config(), {});
    const cached = await embedTexts(TEXTS.slice(0, 2), offline, cache);
    expect(cached.stats).toMatchObject({ cached: 2, computed: 0 });
    const attempt = embedTexts(TEXTS.slice(2, 3), offline, cache);
    await expect(attempt).rejects.toBeInstanceOf(NotConfiguredError);
    await expect(attempt).rejects.toThrow(/OPENAI_EMBEDDINGS_BASE_URL/);
    cache.close();
  });

  it("says which server, which setting and what to do when the key, the route or the server is wrong", async () => {
    server = await startEmbeddingsServer({ dimension: 16, requireKey: KEY });
    const embed = (over: Record<string, unknown>, env: Record<string, string>) =>
      new OpenAIEmbedder(config({ retries: 0, ...over }), env).embed(["sort a list"]);
    await expect(embed({ base_url: server.url }, { OPENAI_API_KEY: "sk-wrong" })).rejects.toThrow(
      new RegExp(`${server.url}.*rejected the API key.*\\$OPENAI_API_KEY`, "s"),
    );
    const bare = server.url.replace(/\/v1$/, "");
    await expect(embed({ base_url: bare }, { OPENAI_API_KEY: KEY })).rejects.toThrow(
      /answered 404 for model bge-test.*embedder\.model.*\/v1/s,
    );
    const dead = `http://127.0.0.1:${await freePort()}/v1`;
    const closed = await embed({ base_url: dead, probe_s: 0.2 }, {}).catch((e: unknown) => e);
    expect((closed as Error).message).toContain(
      `cannot reach the embeddings server at ${dead} (connect ECONNREFUSED 127.0.0.1:`,
    );
    expect((closed as Error).message).toContain("in 0.2 s: start it");
    expect((closed as Error).message).toMatch(/embedder\.base_url.*\/v1.*rerun/s);
    // a server that never answered is a wrong address or one not up: the run stops with 3
    expect(closed).toMatchObject({ exitCode: 3 });
  });

  it("waits probe_s for a server that is not up yet, spending no retries", async () => {
    const port = await freePort();
    const embedder = new OpenAIEmbedder(
      config({ retries: 0, probe_s: 60, base_url: `http://127.0.0.1:${port}/v1` }),
      {},
    );
    const vectors = embedder.embed(["sort a list"]);
    // the server comes up after the first attempt found nobody
    await new Promise((resolve) => setTimeout(resolve, 200));
    server = await startEmbeddingsServer({ dimension: 16, port });
    expect(await vectors).toHaveLength(1);
    expect(server.requests).toEqual([["sort a list"]]);
  });

  it("stops after its probe at a server that accepts connections and never answers, not after timeout_s", async () => {
    const hole = await blackHole();
    try {
      // the test's own limit is far below timeout_s (and the SDK's retries of it)
      const embedder = new OpenAIEmbedder(
        config({ retries: 5, timeout_s: 3600, probe_s: 0.5, base_url: `${hole.url}/v1` }),
        {},
      );
      const error = await embedder.embed(["sort a list"]).catch((e: unknown) => e);
      expect((error as Error).message).toContain(`cannot reach the embeddings server at ${hole.url}/v1`);
      expect((error as Error).message).toContain("accepts connections but sent no answer");
      expect(error).toMatchObject({ exitCode: 3 });
    } finally {
      await hole.close();
    }
  }, 120_000);

  it("waits for a slow server's first answer past probe_s: it answers HTTP, so it is alive", async () => {
    server = await startEmbeddingsServer({ dimension: 16, latencyMs: 1500 });
    const embedder = new OpenAIEmbedder(config({ timeout_s: 60, probe_s: 0.2, base_url: server.url }), {});
    expect(await embedder.embed(["sort a list"])).toHaveLength(1);
  });

  it("probes a server whose batches time out with one attempt a round, not the SDK's retries", async () => {
    server = await startEmbeddingsServer({ dimension: 16, hang: true });
    const embedder = new OpenAIEmbedder(
      config({ retries: 5, timeout_s: 0.3, probe_s: 0.5, base_url: server.url }),
      {},
    );
    const error = await embedder.embed(["sort a list"]).catch((e: unknown) => e);
    expect((error as Error).message).toContain("in 0.5 s: start it");
    expect(error).toMatchObject({ exitCode: 3 });
    // the SDK's retries would have sent retries + 1 in the first round alone
    expect(server.hung).toBeLessThan(6);
  }, 120_000);

  it("a server that answered and then went away is an outage (exit 4)", async () => {
    server = await startEmbeddingsServer({ dimension: 16 });
    const embedder = new OpenAIEmbedder(config({ retries: 0, base_url: server.url }), {});
    expect(await embedder.embed(["sort a list"])).toHaveLength(1);
    await server.close();
    const error = await embedder.embed(["reverse a list"]).catch((e: unknown) => e);
    expect((error as Error).message).toContain("cannot reach the embeddings server");
    expect(error).toMatchObject({ exitCode: 4 });
  });

  it("judges vector lengths the same whichever batch in flight answers first", async () => {
    // an endpoint-like embedder whose length depends on the text, and whose answers come back in
    // an order set by the test: the outcome must not depend on that order
    const answerOrder = async (slowFirstBatch: boolean) => {
      const embedder: Embedder = {
        model: `order-test-${slowFirstBatch}`,
        batchSize: 2,
        concurrency: 2,
        async embed(texts) {
          const first = texts.includes("aa");
          await new Promise((r) => setTimeout(r, first === slowFirstBatch ? 60 : 0));
          return texts.map((t) => ({
            vector: new Float32Array(t.startsWith("b") ? 5 : 4).fill(1),
            truncated: false,
          }));
        },
        async close() {},
      };
      const cache = new EmbeddingCache(path.join(dir, `order-${slowFirstBatch}.sqlite`));
      // sorted by length: [aa, ab] is the first batch, [bbb, bbc] the second
      const { outcomes } = await embedTexts(["bbb", "aa", "bbc", "ab"], embedder, cache);
      cache.close();
      return outcomes.map((o) => (o.ok ? "ok" : o.reason));
    };
    const fastFirst = await answerOrder(false);
    expect(await answerOrder(true)).toEqual(fastFirst);
    expect(fastFirst).toEqual(["embedding-wrong-dimension", "ok", "embedding-wrong-dimension", "ok"]);
  });
});
