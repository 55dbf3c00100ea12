// The transformers.js embedder on a random-weight BERT built by the test itself, served by the test
// hub (the real HF protocol on 127.0.0.1) and fetched through the project's hub client: exactly the
// path a real sentence model takes, offline.
import { existsSync, readdirSync, rmSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EmbeddingCache } from "../../pipeline/embed/cache.js";
import { transformersEmbedderSchema } from "../../pipeline/embed/config.js";
import { checkVector, embedTexts } from "../../pipeline/embed/embed-texts.js";
import { createEmbedder } from "../../pipeline/embed/index.js";
import { ModelMissingError } from "../../pipeline/embed/model-files.js";
import { TransformersEmbedder } from "../../pipeline/embed/transformers.js";
import { hubConfigSchema } from "../../pipeline/hub/config.js";
import { startTestHub, type TestHub } from "../support/hub-server.js";
import { tempDir } from "../support/temp-dir.js";
import { TINY_BERT, writeBertModel } from "../support/tiny-bert.js";

const MODEL = "test-org/tiny-bert";
const root = tempDir("cf-embed-hub-");
const work = tempDir("cf-embed-data-");
let hub: TestHub;

const hubConfig = (endpoint: string) =>
  hubConfigSchema.parse({ endpoint, retries: 0, timeout_s: 5, retry_backoff_s: 0 });
const embedderConfig = (over: Record<string, unknown> = {}) =>
  transformersEmbedderSchema.parse({
    kind: "transformers",
    model: MODEL,
    threads: 1,
    batch_size: 4,
    ...over,
  });

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += a[i]! * b[i]!;
  return dot;
}

beforeAll(async () => {
  writeBertModel(path.join(root, MODEL), { ...TINY_BERT, nanWords: ["nan"] });
  hub = await startTestHub({ root });
});
afterAll(async () => {
  await hub.close();
});

describe("transformers.js embedder", () => {
  it("fetches the model through the hub client and embeds with mean pooling", async () => {
    const embedder = await createEmbedder(embedderConfig(), {
      hub: hubConfig(hub.url),
      dataDir: work,
    });
    expect(embedder).toBeInstanceOf(TransformersEmbedder);
    expect(embedder.dimension).toBe(TINY_BERT.hidden);
    // the files came from the hub, verified, under data_dir/models/<owner>/<name>/<commit>/
    expect(hub.requests.some((r) => r.url.startsWith(`/api/models/${MODEL}/revision/main`))).toBe(true);
    expect(
      hub.requests.some((r) => r.url.includes(`/${MODEL}/resolve/`) && r.url.endsWith("onnx/model.onnx")),
    ).toBe(true);
    expect(embedder.model).toMatch(new RegExp(`^transformers:${MODEL}@[0-9a-f]{40}:fp32:max64:mean$`));

    const [alone] = await embedder.embed(["sort a list"]);
    const batch = await embedder.embed([
      "sort a list",
      "write a python function to find the max value in a binary search tree",
    ]);
    if (!alone || !("vector" in alone) || !batch[0] || !("vector" in batch[0])) throw new Error("no vector");
    expect(alone.vector).toHaveLength(TINY_BERT.hidden);
    // padding the short text in a batch with a long one must not change its vector (masked pooling)
    for (let i = 0; i < TINY_BERT.hidden; i++) expect(batch[0].vector[i]).toBeCloseTo(alone.vector[i]!, 4);
    expect(alone.tokens).toBe(5); // [CLS] sort a list [SEP]
    expect(alone.truncated).toBe(false);
    await embedder.close();
  });

  it("records truncation at the model's maximum length, and turns NaN answers into problems", async () => {
    const embedder = await createEmbedder(embedderConfig(), { hub: hubConfig(hub.url), dataDir: work });
    const cache = new EmbeddingCache(path.join(work, "cache.sqlite"));
    const long = Array.from({ length: 100 }, () => "word").join(" ");
    const exact = Array.from({ length: 62 }, () => "word").join(" "); // 62 + [CLS] + [SEP] = 64: fits
    const texts = ["sort a list", long, exact, "print nan values", "sort a list"];
    const first = await embedTexts(texts, embedder, cache, { dimension: embedder.dimension });
    const [a, cut, fits, nan, again] = first.outcomes;
    expect(a?.ok).toBe(true);
    expect(cut).toMatchObject({ ok: true, truncated: true, tokens: 64 });
    expect(fits).toMatchObject({ ok: true, truncated: false, tokens: 64 });
    expect(nan).toMatchObject({ ok: false, reason: "embedding-not-finite" });
    // identical texts: embedded once, same vector
    expect(again).toEqual(a);
    expect(first.stats).toMatchObject({ texts: 5, cached: 0, computed: 4, truncated: 1, problems: 1 });
    if (!a?.ok) throw new Error("no vector");
    expect(cosine(a.vector, a.vector)).toBeCloseTo(1, 5);

    // a rerun computes nothing that was computed (the NaN one is asked again: it was never stored)
    const second = await embedTexts(texts, embedder, cache, { dimension: embedder.dimension });
    expect(second.stats).toMatchObject({ cached: 4, computed: 1 });
    expect(second.outcomes[1]).toEqual(cut);
    cache.close();
    await embedder.close();
  });

  it("uses the copy fetched earlier when the hub is unreachable", async () => {
    const embedder = await createEmbedder(embedderConfig(), {
      hub: hubConfig("http://127.0.0.1:9"),
      dataDir: work,
    });
    expect(embedder.model).toMatch(/@[0-9a-f]{40}:/);
    await embedder.close();
  });

  it("does not trust, offline, a copy whose fetch was cut short", async () => {
    const home = path.join(work, "models", MODEL);
    const [commit] = readdirSync(home);
    const copy = path.join(home, commit!);
    // as a run killed after the weights but before tokenizer_config.json leaves it
    rmSync(path.join(copy, "tokenizer_config.json"));
    rmSync(path.join(copy, ".fetched.json"), { force: true });
    const offline = createEmbedder(embedderConfig(), {
      hub: hubConfig("http://127.0.0.1:9"),
      dataDir: work,
    });
    await expect(offline).rejects.toBeInstanceOf(ModelMissingError);
    // online, the fetch completes the copy, and offline it is used again
    await (await createEmbedder(embedderConfig(), { hub: hubConfig(hub.url), dataDir: work })).close();
    expect(existsSync(path.join(copy, "tokenizer_config.json"))).toBe(true);
    await (
      await createEmbedder(embedderConfig(), { hub: hubConfig("http://127.0.0.1:9"), dataDir: work })
    ).close();
  });

  it("names the model and what to do when it is absent offline", async () => {
    const fresh = tempDir("cf-embed-fresh-");
    const attempt = createEmbedder(embedderConfig(), {
      hub: hubConfig("http://127.0.0.1:9"),
      dataDir: fresh,
    });
    await expect(attempt).rejects.toBeInstanceOf(ModelMissingError);
    await expect(attempt).rejects.toThrow(/test-org\/tiny-bert.*local_dir.*kind: lexical/s);
    const missing = createEmbedder(embedderConfig({ model: "test-org/no-such-model" }), {
      hub: hubConfig(hub.url),
      dataDir: fresh,
    });
    await expect(missing).rejects.toThrow(/test-org\/no-such-model.*not available/);
  });

  it("pools as transformers.js's own feature-extraction pipeline does (mean under the mask, unit length)", async () => {
    const dir = path.join(root, MODEL);
    const embedder = await createEmbedder(embedderConfig({ local_dir: dir }), {
      hub: hubConfig("http://127.0.0.1:9"),
      dataDir: work,
    });
    const { pipeline } = await import("@huggingface/transformers");
    const extract = await pipeline("feature-extraction", dir, { local_files_only: true, dtype: "fp32" });
    // one batch of very different lengths, so most rows are padded
    const texts = [
      "sort",
      "write a python function to find the max value in a binary search tree",
      "print a list",
    ];
    const reference = (await extract(texts, { pooling: "mean", normalize: true })).tolist() as number[][];
    const ours = await embedder.embed(texts);
    for (const [i, answer] of ours.entries()) {
      if (!("vector" in answer)) throw new Error("no vector");
      const unit = checkVector(answer.vector, TINY_BERT.hidden) as Float32Array;
      for (let d = 0; d < TINY_BERT.hidden; d++) expect(unit[d]).toBeCloseTo(reference[i]![d]!, 4);
    }
    await extract.dispose();
    await embedder.close();
  });

  it("cuts inputs at an explicit max_tokens up to the model's position table, past 512", async () => {
    const dir = path.join(root, "test-org", "long-bert");
    writeBertModel(dir, { ...TINY_BERT, maxPosition: 1024 });
    const load = (over: Record<string, unknown>) =>
      createEmbedder(embedderConfig({ local_dir: dir, ...over }), {
        hub: hubConfig("http://127.0.0.1:9"),
        dataDir: work,
      }) as Promise<TransformersEmbedder>;
    const explicit = await load({ max_tokens: 600 });
    expect(explicit.maxTokens).toBe(600);
    expect(explicit.model).toMatch(/:max600:mean$/);
    const [long] = await explicit.embed([Array.from({ length: 700 }, () => "word").join(" ")]);
    expect(long).toMatchObject({ tokens: 600, truncated: true });
    await explicit.close();
    // asking for more than the model has gives the model's limit; asking nothing, at most 512
    const over = await load({ max_tokens: 4096 });
    expect(over.maxTokens).toBe(1024);
    await over.close();
    const implicit = await load({});
    expect(implicit.maxTokens).toBe(512);
    await implicit.close();
  });

  it("loads a local model directory through the same loader, and checks it first", async () => {
    const embedder = await createEmbedder(embedderConfig({ local_dir: path.join(root, MODEL) }), {
      hub: hubConfig("http://127.0.0.1:9"),
      dataDir: work,
    });
    const [v] = await embedder.embed(["sort a list"]);
    expect(v && "vector" in v && v.vector.length).toBe(TINY_BERT.hidden);
    await embedder.close();
    expect(existsSync(path.join(root, MODEL, "onnx", "model_quantized.onnx"))).toBe(false);
    await expect(
      createEmbedder(embedderConfig({ local_dir: path.join(root, MODEL), dtype: "q8" }), {
        hub: hubConfig(hub.url),
        dataDir: work,
      }),
    ).rejects.toThrow(/has no onnx\/model_quantized\.onnx/);
  });
});
