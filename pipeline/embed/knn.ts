// Nearest neighbours by cosine distance with hnswlib (HNSW graph, approximate; recall measured in
// bench/pack). Labels are positions in the input, so a saved index is only reused for the very same
// vectors in the same order: the file name carries a digest of the embedder, the cache keys of the
// texts in order, and the graph parameters. Building is the expensive part (minutes at 100K), so the
// index is written to the stage's work dir, atomically, and read back on a rerun.
import { createHash } from "node:crypto";
import { mkdir, readdir, rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import hnswlib from "hnswlib-node";
import { InterruptedError } from "../errors.js";
import type { Logger } from "../log.js";
import type { KnnConfig } from "./config.js";

export interface Neighbour {
  /** position in the input */
  index: number;
  /** cosine distance, 1 - cos */
  distance: number;
}

export class KnnIndex {
  private constructor(
    private readonly index: hnswlib.HierarchicalNSW,
    readonly size: number,
    /** true when read back from the work dir rather than built */
    readonly reused: boolean,
  ) {}

  /** Digest naming an index file: same vectors in the same order, same parameters. */
  static fingerprint(model: string, keys: Iterable<Buffer>, config: KnnConfig): string {
    const h = createHash("sha256").update(
      `${model}\n${config.M}\n${config.ef_construction}\n${config.seed}\n`,
    );
    for (const key of keys) h.update(key);
    return h.digest("hex").slice(0, 24);
  }

  /**
   * Builds the index over `vectors` (all of one dimension, L2-normalised), or reads it back from
   * `file` when an earlier run saved it; saves it there when `file` is given.
   */
  static async build(
    vectors: readonly Float32Array[],
    config: KnnConfig,
    options: {
      file?: string | undefined;
      onProgress?: ((done: number, total: number) => void) | undefined;
      /** checked between slices of the build, which yields to the event loop so Ctrl-C is heard */
      signal?: AbortSignal | undefined;
      /** told when a saved file is unreadable and built again */
      log?: Logger | undefined;
    } = {},
  ): Promise<KnnIndex> {
    const dimension = vectors[0]?.length ?? 1;
    let index = new hnswlib.HierarchicalNSW("cosine", dimension);
    const file = options.file;
    if (file && (await stat(file).catch(() => undefined))?.isFile()) {
      // The file is renamed into place whole, but a disk that filled up or a copied work dir can
      // still leave a torn one; it is only a cache, so it is built again rather than failing the run.
      let read: string | undefined;
      try {
        await index.readIndex(file);
      } catch (error) {
        read = error instanceof Error ? error.message : String(error);
      }
      if (read === undefined && index.getCurrentCount() === vectors.length) {
        index.setEf(Math.max(config.ef, 8));
        return new KnnIndex(index, vectors.length, true);
      }
      options.log?.warn(
        `kNN index ${file} could not be read back (${read ?? `${index.getCurrentCount()} points where ${vectors.length} were expected`}); rebuilding it`,
      );
      index = new hnswlib.HierarchicalNSW("cosine", dimension);
    }
    index.initIndex({
      maxElements: Math.max(1, vectors.length),
      m: config.M,
      efConstruction: config.ef_construction,
      randomSeed: config.seed,
    });
    for (const [i, v] of vectors.entries()) {
      index.addPoint(Array.from(v), i);
      if (i % 2048 === 2047) {
        options.onProgress?.(i + 1, vectors.length);
        await new Promise((resolve) => setImmediate(resolve));
        if (options.signal?.aborted) {
          throw new InterruptedError("interrupted while building the kNN index; rerun to build it again");
        }
      }
    }
    index.setEf(Math.max(config.ef, 8));
    if (file) {
      await mkdir(path.dirname(file), { recursive: true });
      const temporary = `${file}.${process.pid}.tmp`;
      try {
        await index.writeIndex(temporary);
        await rename(temporary, file);
      } catch (error) {
        // a full disk must not keep the half-written index: the rerun needs that room
        await rm(temporary, { force: true });
        throw error;
      }
    }
    return new KnnIndex(index, vectors.length, false);
  }

  /**
   * The `k` nearest neighbours of the vector at `position`, nearest first, leaving out the position
   * itself and any position `isDuplicate` says is the same text. Asks the index for more when the
   * left-out ones crowd the answer.
   */
  neighbours(
    vector: Float32Array,
    position: number,
    k: number,
    isDuplicate: (other: number) => boolean = () => false,
  ): Neighbour[] {
    const point = Array.from(vector);
    for (let ask = Math.min(this.size, k + 1); ; ask = Math.min(this.size, ask * 2)) {
      const { neighbors, distances } = this.index.searchKnn(point, ask);
      const out: Neighbour[] = [];
      for (const [j, other] of neighbors.entries()) {
        if (other === position || isDuplicate(other)) continue;
        out.push({ index: other, distance: Math.max(0, distances[j]!) });
        if (out.length === k) break;
      }
      // ties in distance come back in the graph's order; sort so the answer reads the same every time
      out.sort((a, b) => a.distance - b.distance || a.index - b.index);
      if (out.length === k || ask >= this.size) return out;
    }
  }

  /**
   * Removes the `knn-*` files in `dir` other than `keep`: indexes of earlier inputs (hundreds of MB
   * each at 100K queries) and the temporary file of a run killed while writing one.
   */
  static async prune(dir: string, keep: readonly string[]): Promise<void> {
    const kept = new Set(keep.map((f) => path.resolve(f)));
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      const file = path.resolve(dir, name);
      if (name.startsWith("knn-") && !kept.has(file)) await rm(file, { force: true });
    }
  }
}
