// MinHash signatures over word shingles: the fraction of equal positions in two signatures estimates
// the Jaccard similarity of the two texts' shingle sets (Broder, 1997).
import { seededUint32 } from "../random.js";
import { wordGrams, wordHashes } from "./text.js";

/** Flipping the sign bit maps uint32 order onto int32 order. */
const SIGN = -0x80000000;
/** 0xffffffff, the largest uint32 (and the value of an empty set's signature), sign-flipped */
const MAX_FLIPPED = 0x7fffffff;

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
   * xor-multiply-xorshift (the shingle hashes are already mixed); its minimum over the shingles is the
   * signature value. Four permutations share each pass over the shingles, which halves the time, and
   * the minimum is taken on values with the sign bit flipped, which orders int32s as the unsigned
   * values they stand for while staying in the JIT's fast small-integer path.
   */
  signatureOf(shingles: Uint32Array, out: Uint32Array = new Uint32Array(this.numPerm)): Uint32Array {
    const n = shingles.length;
    const a = this.multipliers;
    const b = this.offsets;
    let p = 0;
    for (; p + 4 <= this.numPerm; p += 4) {
      const a0 = a[p]!;
      const a1 = a[p + 1]!;
      const a2 = a[p + 2]!;
      const a3 = a[p + 3]!;
      const b0 = b[p]!;
      const b1 = b[p + 1]!;
      const b2 = b[p + 2]!;
      const b3 = b[p + 3]!;
      let m0 = MAX_FLIPPED;
      let m1 = MAX_FLIPPED;
      let m2 = MAX_FLIPPED;
      let m3 = MAX_FLIPPED;
      for (let s = 0; s < n; s++) {
        const x = shingles[s]!;
        let v = Math.imul(x ^ b0, a0);
        v ^= (v >>> 15) ^ SIGN;
        if (v < m0) m0 = v;
        v = Math.imul(x ^ b1, a1);
        v ^= (v >>> 15) ^ SIGN;
        if (v < m1) m1 = v;
        v = Math.imul(x ^ b2, a2);
        v ^= (v >>> 15) ^ SIGN;
        if (v < m2) m2 = v;
        v = Math.imul(x ^ b3, a3);
        v ^= (v >>> 15) ^ SIGN;
        if (v < m3) m3 = v;
      }
      out[p] = m0 ^ SIGN;
      out[p + 1] = m1 ^ SIGN;
      out[p + 2] = m2 ^ SIGN;
      out[p + 3] = m3 ^ SIGN;
    }
    for (; p < this.numPerm; p++) {
      let m = MAX_FLIPPED;
      for (let s = 0; s < n; s++) {
        let v = Math.imul(shingles[s]! ^ b[p]!, a[p]!);
        v ^= (v >>> 15) ^ SIGN;
        if (v < m) m = v;
      }
      out[p] = m ^ SIGN;
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
