// The lexical embedder and the kNN index: shared words bring texts close; the HNSW index finds what
// an exact search finds, never answers a query with itself or its duplicates, and is read back from
// its file for the same vectors.
import { existsSync, readdirSync, statSync, truncateSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { knnConfigSchema, lexicalEmbedderSchema } from "../../pipeline/embed/config.js";
import { checkVector } from "../../pipeline/embed/embed-texts.js";
import { KnnIndex } from "../../pipeline/embed/knn.js";
import { LexicalEmbedder } from "../../pipeline/embed/lexical.js";
import { seededRandom } from "../../pipeline/random.js";
import { tempDir } from "../support/temp-dir.js";

const dir = tempDir("cf-knn-");

function unit(v: Float32Array): Float32Array {
  return checkVector(v, v.length) as Float32Array;
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

/** Points around `clusters` random centres, normalised. */
function clustered(n: number, dim: number, clusters: number, seed: number): Float32Array[] {
  const random = seededRandom(seed);
  const gauss = () => Math.sqrt(-2 * Math.log(random() || 1e-12)) * Math.cos(2 * Math.PI * random());
  const centres = Array.from({ length: clusters }, () => Float32Array.from({ length: dim }, gauss));
  return Array.from({ length: n }, () => {
    const c = centres[Math.floor(random() * clusters)]!;
    return unit(Float32Array.from(c, (x) => x + 0.6 * gauss()));
  });
}

describe("lexical embedder", () => {
  const embedder = new LexicalEmbedder(lexicalEmbedderSchema.parse({ kind: "lexical", dimensions: 256 }));
  it("puts texts that share words closer than texts that do not, and is deterministic", () => {
    const a = unit(embedder.vectorOf("Write a Python function that reverses a linked list"));
    const b = unit(embedder.vectorOf("write a python function to reverse a singly linked list"));
    const c = unit(embedder.vectorOf("SELECT the ten most expensive products from an SQL table"));
    expect(dot(a, b)).toBeGreaterThan(dot(a, c) + 0.2);
    expect(Array.from(embedder.vectorOf("same text"))).toEqual(Array.from(embedder.vectorOf("same text")));
    expect(embedder.model).toBe("lexical:v1:d256:w1,2:c3,4");
  });
});

describe("kNN index", () => {
  const config = knnConfigSchema.parse({});
  const vectors = clustered(3000, 32, 40, 5);

  function exact(i: number, k: number): number[] {
    return vectors
      .map((v, j) => ({ j, d: 1 - dot(vectors[i]!, v) }))
      .filter((x) => x.j !== i)
      .sort((a, b) => a.d - b.d)
      .slice(0, k)
      .map((x) => x.j);
  }

  it("finds the exact nearest neighbours (recall@4 >= 0.95) and never the query itself", async () => {
    const index = await KnnIndex.build(vectors, config);
    let found = 0;
    const sample = Array.from({ length: 200 }, (_, s) => s * 15);
    for (const i of sample) {
      const got = index.neighbours(vectors[i]!, i, 4);
      expect(got.map((n) => n.index)).not.toContain(i);
      expect(got).toHaveLength(4);
      for (let k = 1; k < got.length; k++)
        expect(got[k]!.distance).toBeGreaterThanOrEqual(got[k - 1]!.distance);
      const truth = new Set(exact(i, 4));
      found += got.filter((n) => truth.has(n.index)).length;
    }
    expect(found / (sample.length * 4)).toBeGreaterThanOrEqual(0.95);
  });

  it("leaves out duplicates of the query, asking the index for more when they crowd the answer", async () => {
    // ten copies of one vector and a few others
    const copies = Array.from({ length: 10 }, () => vectors[0]!);
    const few = [...copies, ...vectors.slice(1, 30)];
    const index = await KnnIndex.build(few, config);
    const got = index.neighbours(few[0]!, 0, 4, (j) => j < 10);
    expect(got).toHaveLength(4);
    expect(got.every((n) => n.index >= 10)).toBe(true);
    // a group smaller than k + 1 gives what there is
    const tiny = await KnnIndex.build(vectors.slice(0, 3), config);
    expect(tiny.neighbours(vectors[0]!, 0, 4)).toHaveLength(2);
  });

  it("saves the index and reads it back for the same vectors", async () => {
    const file = path.join(dir, "knn-test.bin");
    const built = await KnnIndex.build(vectors, config, { file });
    expect(built.reused).toBe(false);
    expect(existsSync(file)).toBe(true);
    const again = await KnnIndex.build(vectors, config, { file });
    expect(again.reused).toBe(true);
    for (const i of [0, 17, 2999])
      expect(again.neighbours(vectors[i]!, i, 4)).toEqual(built.neighbours(vectors[i]!, i, 4));
  });

  it("rebuilds over a torn or corrupt index file instead of failing on every rerun", async () => {
    const file = path.join(dir, "knn-torn.bin");
    const built = await KnnIndex.build(vectors, config, { file });
    truncateSync(file, Math.floor(statSync(file).size / 2));
    const warnings: string[] = [];
    const log = { info() {}, debug() {}, warn: (m: string) => warnings.push(m) };
    const rebuilt = await KnnIndex.build(vectors, config, { file, log });
    expect(rebuilt.reused).toBe(false);
    expect(warnings.join("\n")).toMatch(/knn-torn\.bin.*could not be read.*rebuilding/);
    expect(rebuilt.neighbours(vectors[5]!, 5, 4)).toEqual(built.neighbours(vectors[5]!, 5, 4));
    // the rewritten file is whole again
    expect((await KnnIndex.build(vectors, config, { file })).reused).toBe(true);
    writeFileSync(file, Buffer.alloc(64, 7));
    expect((await KnnIndex.build(vectors, config, { file, log })).reused).toBe(false);
  });

  it("prunes index files of earlier inputs and temporary files a killed run left", async () => {
    const prunable = path.join(dir, "prune");
    const keep = path.join(prunable, "knn-python-aaaa.bin");
    await KnnIndex.build(vectors.slice(0, 50), config, { file: keep });
    for (const name of [
      "knn-python-bbbb.bin",
      "knn-java-cccc.bin",
      `knn-python-aaaa.bin.4242.tmp`,
      "notes.txt",
    ])
      writeFileSync(path.join(prunable, name), "x");
    await KnnIndex.prune(prunable, [keep]);
    expect(readdirSync(prunable).sort()).toEqual(["knn-python-aaaa.bin", "notes.txt"]);
  });
});
