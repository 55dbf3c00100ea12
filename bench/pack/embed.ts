// Embedding throughput of the pipeline (`createEmbedder` + `embedTexts`, a fresh cache) against a raw
// onnxruntime-node loop on the same BERT-base-shaped random-weight model (test/support/tiny-bert.ts),
// texts, batches and threads. Runs alternate after a warm-up; the ratio is of the medians (target
// >= 0.90).
//   pnpm bench pack-embed [-- --texts 96 --batch 16 --runs 3 --threads 2]
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { AutoTokenizer } from "@huggingface/transformers";
import { EmbeddingCache } from "../../pipeline/embed/cache.js";
import { transformersEmbedderSchema } from "../../pipeline/embed/config.js";
import { embedTexts } from "../../pipeline/embed/embed-texts.js";
import { createEmbedder } from "../../pipeline/embed/index.js";
import { meanPool } from "../../pipeline/embed/transformers.js";
import { hubConfigSchema } from "../../pipeline/hub/config.js";
import { seededRandom } from "../../pipeline/random.js";
import { BERT_BASE_SHAPE, TEST_WORDS, writeBertModel } from "../../test/support/tiny-bert.js";
import { numberArg } from "../args.js";
import { upperMedian } from "../median.js";

const TEXTS = numberArg("texts", 96);
const BATCH = numberArg("batch", 16);
const RUNS = numberArg("runs", 3);
const THREADS = numberArg("threads", os.availableParallelism());

// onnxruntime-node is transformers.js's own dependency (not the project's): resolve it from there,
// so the baseline runs the very same native library.
const requireFromTransformers = createRequire(
  createRequire(import.meta.url).resolve("@huggingface/transformers"),
);
// (typed here by hand: the package is not the project's own dependency, so its types are not either)
interface OrtTensor {
  dims: readonly number[];
  data: unknown;
}
interface Ort {
  Tensor: new (type: "int64", data: BigInt64Array, dims: readonly number[]) => OrtTensor;
  InferenceSession: {
    create(
      file: string,
      options: { intraOpNumThreads: number; interOpNumThreads: number; executionProviders: string[] },
    ): Promise<{
      run(feeds: Record<string, OrtTensor>): Promise<Record<string, OrtTensor>>;
      release(): Promise<void>;
    }>;
  };
}
const ort = requireFromTransformers("onnxruntime-node") as Ort;

/** Queries of 8 to 200 words from the test vocabulary, like filtered queries' spread of lengths. */
function texts(n: number): string[] {
  const random = seededRandom(17);
  const words = TEST_WORDS.filter((w) => /^[a-z]+$/.test(w));
  return Array.from({ length: n }, () => {
    const length = 8 + Math.floor(random() ** 2 * 192);
    return Array.from({ length }, () => words[Math.floor(random() * words.length)]).join(" ");
  });
}

const dir = mkdtempSync(path.join(os.tmpdir(), "cf-bench-embed-"));
try {
  let t = performance.now();
  const modelDir = writeBertModel(path.join(dir, "bert-base-shaped"), BERT_BASE_SHAPE);
  console.log(
    `wrote a BERT-base-shaped random-weight model in ${((performance.now() - t) / 1000).toFixed(1)} s`,
  );
  const inputs = texts(TEXTS);

  const embedder = await createEmbedder(
    transformersEmbedderSchema.parse({
      kind: "transformers",
      local_dir: modelDir,
      batch_size: BATCH,
      threads: THREADS,
    }),
    { hub: hubConfigSchema.parse({}), dataDir: dir },
  );
  const tokenizer = await AutoTokenizer.from_pretrained(modelDir, { local_files_only: true });
  const session = await ort.InferenceSession.create(path.join(modelDir, "onnx", "model.onnx"), {
    intraOpNumThreads: THREADS,
    interOpNumThreads: 1,
    executionProviders: ["cpu"],
  });
  // the pipeline's batches: texts sorted by length, cut every BATCH
  const sorted = [...inputs].sort((a, b) => a.length - b.length || (a < b ? -1 : 1));
  const batches: string[][] = [];
  for (let i = 0; i < sorted.length; i += BATCH) batches.push(sorted.slice(i, i + BATCH));

  async function raw(): Promise<number> {
    const start = performance.now();
    for (const batch of batches) {
      const enc = tokenizer(batch, { padding: true, truncation: true, max_length: 512 }) as unknown as Record<
        string,
        { dims: number[]; data: BigInt64Array }
      >;
      const feeds: Record<string, OrtTensor> = {};
      for (const name of ["input_ids", "attention_mask", "token_type_ids"]) {
        feeds[name] = new ort.Tensor("int64", enc[name]!.data, enc[name]!.dims);
      }
      const out = await session.run(feeds);
      const hidden = out.last_hidden_state!;
      meanPool(hidden.data as Float32Array, enc.attention_mask!.data, hidden.dims as number[]);
    }
    return (performance.now() - start) / 1000;
  }

  let runNo = 0;
  async function pipeline(): Promise<number> {
    const cache = new EmbeddingCache(path.join(dir, `cache-${runNo++}.sqlite`));
    const start = performance.now();
    const { stats } = await embedTexts(inputs, embedder, cache, { dimension: embedder.dimension });
    const seconds = (performance.now() - start) / 1000;
    cache.close();
    if (stats.computed !== inputs.length)
      throw new Error(`expected ${inputs.length} computed, got ${stats.computed}`);
    return seconds;
  }

  let tokens = 0;
  for (const batch of batches) {
    const enc = tokenizer(batch, { padding: true, truncation: true, max_length: 512 }) as unknown as {
      attention_mask: { data: BigInt64Array };
    };
    for (const m of enc.attention_mask.data) tokens += Number(m);
  }
  t = performance.now();
  await raw();
  await pipeline();
  console.log(`warm-up: ${((performance.now() - t) / 1000).toFixed(1)} s`);
  const rawTimes: number[] = [];
  const pipeTimes: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    rawTimes.push(await raw());
    pipeTimes.push(await pipeline());
    console.log(`  run ${r + 1}: raw ${rawTimes[r]!.toFixed(2)} s, pipeline ${pipeTimes[r]!.toFixed(2)} s`);
  }
  const rawS = upperMedian(rawTimes);
  const pipeS = upperMedian(pipeTimes);
  console.log(
    `embedding ${TEXTS} texts (${tokens} tokens, ${batches.length} batches of ${BATCH}, ${THREADS} threads), BERT-base shape:`,
  );
  console.log(`  raw onnxruntime-node loop: ${(TEXTS / rawS).toFixed(1)} texts/s (median of ${RUNS})`);
  console.log(`  pipeline:                  ${(TEXTS / pipeS).toFixed(1)} texts/s`);
  console.log(`  pipeline / raw: ${(rawS / pipeS).toFixed(3)}x  (target >= 0.90x)`);
  await embedder.close();
  await session.release();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
