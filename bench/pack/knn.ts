// kNN and the pack stage at the paper's scale (105K clustered 768-d unit vectors): the product's
// KnnIndex against an exact brute-force scan of the same sample (recall@4 >= 0.95, speed >= 20x), and
// the real pack stage in a child process over records whose vectors are already in the embedding
// cache (peak RSS <= 1.5 GiB). `--only` runs one of the two.
//   pnpm bench pack [-- --n 105000 --dim 768 --sample 200 --only knn|stage]
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { EmbeddingCache, embeddingKey } from "../../pipeline/embed/cache.js";
import { knnConfigSchema } from "../../pipeline/embed/config.js";
import { KnnIndex } from "../../pipeline/embed/knn.js";
import { numberArg, textArg } from "../args.js";
import { clusteredVectors, syntheticQuery } from "./synthetic.js";

const only = textArg("only");
const N = numberArg("n", 105_000);
const DIM = numberArg("dim", 768);
const SAMPLE = numberArg("sample", 200);
const CLUSTERS = numberArg("clusters", 400);
const config = knnConfigSchema.parse({});
const MODEL = "bench-clustered";

const fmt = (x: number, digits = 1) => x.toLocaleString("en-US", { maximumFractionDigits: digits });

async function benchKnn(vectors: Float32Array): Promise<void> {
  const rows = Array.from({ length: N }, (_, i) => vectors.subarray(i * DIM, (i + 1) * DIM));
  let t = performance.now();
  // the same build the stage runs (no file: this measures building, not reading back)
  const index = await KnnIndex.build(rows, config);
  {
    const buildS = (performance.now() - t) / 1000;
    const step = Math.floor(N / SAMPLE);
    const sample = Array.from({ length: SAMPLE }, (_, s) => s * step);

    t = performance.now();
    const approx = sample.map((i) => index.neighbours(rows[i]!, i, 4));
    const hnswPerQueryMs = (performance.now() - t) / SAMPLE;

    t = performance.now();
    const exact = sample.map((i) => bruteForce(vectors, i, 4));
    const brutePerQueryMs = (performance.now() - t) / SAMPLE;

    let found = 0;
    for (const [s, got] of approx.entries()) {
      const truth = new Set(exact[s]);
      found += got.filter((n) => truth.has(n.index)).length;
    }
    const recall = found / (SAMPLE * 4);
    const jobHnswS = buildS + (hnswPerQueryMs * N) / 1000;
    const jobBruteS = (brutePerQueryMs * N) / 1000;
    console.log(
      `kNN over ${fmt(N, 0)} x ${DIM} clustered unit vectors (${CLUSTERS} clusters), M ${config.M}, ef_construction ${config.ef_construction}, ef ${config.ef}`,
    );
    console.log(
      `  recall@4 on ${SAMPLE} queries against exact search: ${recall.toFixed(4)}  (target >= 0.95)`,
    );
    console.log(`  build: ${fmt(buildS)} s (${fmt(N / buildS, 0)} vectors/s)`);
    console.log(
      `  per query: hnswlib ${hnswPerQueryMs.toFixed(3)} ms, brute force ${brutePerQueryMs.toFixed(2)} ms: ${fmt(brutePerQueryMs / hnswPerQueryMs)}x`,
    );
    console.log(
      `  whole job (every query's neighbours): hnswlib build + ${fmt(N, 0)} queries ${fmt(jobHnswS)} s, brute force ${fmt(jobBruteS)} s (extrapolated from the sample): ${fmt(jobBruteS / jobHnswS)}x  (target >= 20x)`,
    );
  }
}

/** Exact cosine neighbours (the vectors are unit length, so the largest dot products). */
function bruteForce(vectors: Float32Array, q: number, k: number): number[] {
  const best: { j: number; s: number }[] = [];
  const qo = q * DIM;
  for (let j = 0; j < N; j++) {
    if (j === q) continue;
    const jo = j * DIM;
    let s = 0;
    for (let d = 0; d < DIM; d++) s += vectors[qo + d]! * vectors[jo + d]!;
    if (best.length < k || s > best[best.length - 1]!.s) {
      best.push({ j, s });
      best.sort((a, b) => b.s - a.s);
      if (best.length > k) best.pop();
    }
  }
  return best.map((b) => b.j);
}

function benchStage(vectors: Float32Array): void {
  const dir = mkdtempSync(path.join(tmpdir(), "cf-bench-pack-"));
  try {
    const file = path.join(dir, "config.yaml");
    writeFileSync(
      file,
      [
        `data_dir: ${path.join(dir, "data")}`,
        "stages:",
        "  filter:",
        `    count: ${N}`,
        "  pack:",
        // an endpoint that is never reached: every vector is in the cache already
        `    embedder: {kind: openai, model: ${MODEL}, base_url: "http://127.0.0.1:9/v1"}`,
        "",
      ].join("\n"),
    );
    const child = (stage: string) => {
      const run = spawnSync(
        process.execPath,
        [...process.execArgv, new URL("./stage-child.ts", import.meta.url).pathname, file, stage],
        { encoding: "utf8", maxBuffer: 1 << 24 },
      );
      if (run.status !== 0) throw new Error(`${stage} child failed: ${run.stderr}`);
      return JSON.parse(run.stdout.trim().split("\n").pop()!);
    };
    child("filter");
    // the vectors an embedder would have cached, keyed as the stage will look them up
    const cache = new EmbeddingCache(path.join(dir, "data", "embed-cache.sqlite"));
    const batch: Parameters<EmbeddingCache["putMany"]>[0] = [];
    const model = `openai:${MODEL}`;
    for (let i = 0; i < N; i++) {
      batch.push({
        key: embeddingKey(model, syntheticQuery(i)),
        model,
        value: { vector: vectors.subarray(i * DIM, (i + 1) * DIM), tokens: undefined, truncated: false },
      });
      if (batch.length === 4096 || i === N - 1) cache.putMany(batch.splice(0));
    }
    cache.close();
    const result = child("pack");
    const s = result.stats;
    console.log(`pack stage over ${fmt(N, 0)} filtered records (vectors cached), in its own process:`);
    console.log(
      `  peak RSS ${fmt(result.peakRssMiB, 0)} MiB  (target <= 1,536 MiB); ${fmt(result.seconds)} s`,
    );
    console.log(
      `  ${fmt(s["single-turn-packing"].dialogues, 0)} dialogues, ${fmt(s["single-turn-packing"].turns, 0)} turns, ${fmt(s.bypassed, 0)} bypassed, ${fmt(s.left_single, 0)} left single (paper: 16,600 dialogues, 33,500 turns from 105K)`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const t0 = performance.now();
const vectors = clusteredVectors(N, DIM, CLUSTERS, 2024);
console.log(`generated ${fmt(N, 0)} vectors in ${fmt((performance.now() - t0) / 1000)} s`);
if (only !== "stage") await benchKnn(vectors);
if (only !== "knn") benchStage(vectors);
