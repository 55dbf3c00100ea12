// What the pack benchmarks feed the real code: clustered random unit vectors (queries on a few
// hundred topics, like the paper's 105K single turns), and a stand-in for the filter stage that
// yields one synthetic record per vector.
import { z } from "zod";
import { seededRandom } from "../../pipeline/random.js";
import { defineStage } from "../../pipeline/stage.js";

/** `n` unit vectors of `dim` numbers around `clusters` centres, row after row in one array. */
export function clusteredVectors(n: number, dim: number, clusters: number, seed: number): Float32Array {
  const random = seededRandom(seed);
  const gauss = () => Math.sqrt(-2 * Math.log(random() || 1e-12)) * Math.cos(2 * Math.PI * random());
  const centres = new Float32Array(clusters * dim);
  for (let i = 0; i < centres.length; i++) centres[i] = gauss();
  const out = new Float32Array(n * dim);
  for (let r = 0; r < n; r++) {
    const c = Math.floor(random() * clusters) * dim;
    let norm = 0;
    for (let d = 0; d < dim; d++) {
      const x = centres[c + d]! + 0.8 * gauss();
      out[r * dim + d] = x;
      norm += x * x;
    }
    const scale = 1 / Math.sqrt(norm);
    for (let d = 0; d < dim; d++) out[r * dim + d]! *= scale;
  }
  return out;
}

export function syntheticQuery(i: number): string {
  return `Synthetic query ${i}: write a function for task ${i % 997} and explain its complexity.`;
}

export const syntheticFilterStage = defineStage({
  name: "filter",
  description: "synthetic filtered records for the pack benchmark",
  upstream: [],
  kind: "record",
  configSchema: z.object({ count: z.number().int().default(105_000) }).strict(),
  concurrency: () => 64,
  input: async function* (ctx) {
    for (let i = 0; i < ctx.config.count; i++) {
      yield {
        id: `bench:${String(i).padStart(6, "0")}`,
        query: syntheticQuery(i),
        answer: `def task_${i}():\n    return ${i}\n`,
        resource: "magicoder",
        lang: "python",
      };
    }
  },
  process: async (record) => ({ out: [record] }),
});
