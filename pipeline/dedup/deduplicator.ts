// Exact, then near-duplicate detection over a stream of documents. The first document of a group
// survives; every later one is reported with the survivor it duplicates. Only survivors are indexed,
// so a reason always names a document that is kept, and memory grows with survivors only (a
// signature of numPerm 32-bit values and a 16-byte key each).
import { LshIndex, type LshParameters, optimalLshParameters } from "./lsh.js";
import { estimateJaccard, MinHasher } from "./minhash.js";
import { exactKey as exactKeyOf, wordHashes } from "./text.js";

/**
 * Signatures are kept in blocks of this many documents: a doubling array would at its peak hold the
 * old and the new copy, 400 MB for 287k documents at 128 permutations instead of 150.
 */
const SIGNATURE_BLOCK = 4096;

export interface DedupOptions {
  exact: boolean;
  near: boolean;
  /** Jaccard similarity (estimated) at or above which two documents are near duplicates */
  threshold: number;
  numPerm: number;
  shingleWords: number;
}

export type DedupVerdict =
  | { kind: "unique" }
  | { kind: "exact-duplicate"; of: string }
  | { kind: "near-duplicate"; of: string; similarity: number };

export class Deduplicator {
  readonly options: DedupOptions;
  readonly lsh: LshParameters;
  private readonly exactKeys = new Map<number, string>();
  private readonly hasher: MinHasher;
  private readonly index: LshIndex;
  private readonly survivors: string[] = [];
  /** survivors' signatures, SIGNATURE_BLOCK documents per block: growing never copies them */
  private readonly signatures: Uint32Array[] = [];
  private readonly scratch: Uint32Array;
  private readonly keys: Uint32Array;
  private stamps: Int32Array;
  private checks = 0;

  constructor(options: DedupOptions) {
    this.options = options;
    this.lsh = optimalLshParameters(options.threshold, options.numPerm);
    this.hasher = new MinHasher(options);
    this.index = new LshIndex(this.lsh);
    this.scratch = new Uint32Array(options.numPerm);
    this.keys = new Uint32Array(this.lsh.bands);
    this.stamps = new Int32Array(1024).fill(-1);
  }

  /**
   * Decides on one document and, when it survives, remembers it for the documents after it. `words`:
   * the text's `wordHashes`, when the caller computed them already.
   */
  check(id: string, text: string, words?: Uint32Array): DedupVerdict {
    let exactKey: number | undefined;
    if (this.options.exact) {
      exactKey = exactKeyOf(text);
      const first = this.exactKeys.get(exactKey);
      if (first !== undefined) return { kind: "exact-duplicate", of: first };
    }
    if (this.options.near) {
      const signature = this.hasher.signatureOfWords(words ?? wordHashes(text), this.scratch);
      const keys = this.index.bandKeys(signature, this.keys);
      const match = this.nearest(signature, keys);
      if (match)
        return { kind: "near-duplicate", of: this.survivors[match.doc]!, similarity: match.similarity };
      const doc = this.index.insert(keys);
      this.store(doc, signature);
      this.survivors.push(id);
    }
    if (exactKey !== undefined) this.exactKeys.set(exactKey, id);
    return { kind: "unique" };
  }

  /** The earliest survivor at or above the threshold among the LSH candidates. */
  private nearest(
    signature: Uint32Array,
    keys: Uint32Array,
  ): { doc: number; similarity: number } | undefined {
    const stamp = this.checks++;
    const numPerm = this.options.numPerm;
    let best: { doc: number; similarity: number } | undefined;
    this.index.forEachCandidate(keys, (doc) => {
      if (this.stamps[doc] === stamp) return undefined;
      this.stamps[doc] = stamp;
      if (best && doc >= best.doc) return undefined;
      const block = this.signatures[Math.floor(doc / SIGNATURE_BLOCK)]!;
      const similarity = estimateJaccard(signature, block, (doc % SIGNATURE_BLOCK) * numPerm);
      if (similarity >= this.options.threshold) best = { doc, similarity };
      return undefined;
    });
    return best;
  }

  private store(doc: number, signature: Uint32Array): void {
    const numPerm = this.options.numPerm;
    if (doc % SIGNATURE_BLOCK === 0) this.signatures.push(new Uint32Array(SIGNATURE_BLOCK * numPerm));
    this.signatures[this.signatures.length - 1]!.set(signature, (doc % SIGNATURE_BLOCK) * numPerm);
    if (doc >= this.stamps.length) {
      const stamps = new Int32Array(this.stamps.length * 2).fill(-1);
      stamps.set(this.stamps);
      this.stamps = stamps;
    }
  }
}
