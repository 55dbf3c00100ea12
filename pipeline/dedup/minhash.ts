// MinHash signatures over word shingles: the fraction of equal positions in two signatures estimates
// the Jaccard similarity of the two texts' shingle sets (Broder, 1997).
import { seededUint32 } from "../random.js";
import { wordGrams, wordHashes } from "./text.js";

export interface MinHashOptions {
  /** signature length; more is more accurate and slower */
  numPerm: number;
  /** words per shingle */
  shingleWords: number;
  /** fixes the hash functions, so signatures are comparable across runs */
  seed?: number;
}

export class MinHasher {
  readonly numPerm: number;
  readonly shingleWords: number;
  private readonly multipliers: Int32Array;
  private readonly offsets: Int32Array;

  constructor(options: MinHashOptions) {
    this.numPerm = options.numPerm;
    this.shingleWords = options.shingleWords;
    const random = seededUint32(options.seed ?? 1);
    this.multipliers = new Int32Array(this.numPerm);
    this.offsets = new Int32Array(this.numPerm);
    for (let p = 0; p < this.numPerm; p++) {
      this.multipliers[p] = random() | 1; // odd: multiplication is then a bijection mod 2^32
      this.offsets[p] = random();
    }
  }

  /** Distinct hashes of the text's word k-grams (one shingle of all words when there are fewer than k). */
  shingles(text: string): Uint32Array {
    return wordGrams(wordHashes(text), this.shingleWords, { allowShort: true, distinct: true });
  }

  /** The signature of `text`, written into `out` when given. */
  signature(text: string, out: Uint32Array = new Uint32Array(this.numPerm)): Uint32Array {
    return this.signatureOf(this.shingles(text), out);
  }

  /** The signature from the text's word hashes (see `wordHashes`), when the caller has them already. */
  signatureOfWords(hashes: Uint32Array, out: Uint32Array = new Uint32Array(this.numPerm)): Uint32Array {
    return this.signatureOf(wordGrams(hashes, this.shingleWords, { allowShort: true, distinct: false }), out);
  }

  /**
   * The signature of a set of shingle hashes (repeats allowed). Each permutation is one round of
   * xor-multiply-xorshift (the shingle hashes are already mixed), and its minimum over the shingles,
   * compared as unsigned values, is the signature value (0xffffffff for no shingles).
   */
  signatureOf(shingles: Uint32Array, out: Uint32Array = new Uint32Array(this.numPerm)): Uint32Array {
    for (let p = 0; p < this.numPerm; p++) {
      const a = this.multipliers[p]!;
      const b = this.offsets[p]!;
      let min = 0xffffffff;
      for (let i = 0; i < shingles.length; i++) {
        const t = Math.imul(shingles[i]! ^ b, a);
        const v = (t ^ (t >>> 15)) >>> 0;
        if (v < min) min = v;
      }
      out[p] = min;
    }
    return out;
  }
}

/** Estimated Jaccard similarity: the share of positions where two signatures agree. */
export function estimateJaccard(a: Uint32Array, b: Uint32Array, offsetB = 0): number {
  const n = a.length;
  let same = 0;
  for (let i = 0; i < n; i++) if (a[i] === b[offsetB + i]) same++;
  return same / n;
}
