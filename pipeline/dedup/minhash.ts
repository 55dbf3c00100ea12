// MinHash signatures over word shingles: the fraction of equal positions in two signatures estimates
// the Jaccard similarity of the two texts' shingle sets (Broder, 1997).
import { combine, hashString, seededRandom } from "./hash.js";
import { words } from "./text.js";

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
    const random = seededRandom(options.seed ?? 1);
    this.multipliers = new Int32Array(this.numPerm);
    this.offsets = new Int32Array(this.numPerm);
    for (let p = 0; p < this.numPerm; p++) {
      this.multipliers[p] = random() | 1; // odd: multiplication is then a bijection mod 2^32
      this.offsets[p] = random();
    }
  }

  /** Distinct hashes of the text's word k-grams (one shingle of all words when there are fewer than k). */
  shingles(text: string): Uint32Array {
    const tokens = words(text);
    const k = this.shingleWords;
    const hashes = new Uint32Array(tokens.length);
    for (let i = 0; i < tokens.length; i++) hashes[i] = hashString(tokens[i]!);
    const count = tokens.length === 0 ? 0 : Math.max(1, tokens.length - k + 1);
    const out = new Uint32Array(count);
    for (let s = 0; s < count; s++) {
      let h = 0x2545f491;
      const end = Math.min(tokens.length, s + k);
      for (let i = s; i < end; i++) h = combine(h, hashes[i]!);
      out[s] = h;
    }
    out.sort();
    let unique = 0;
    for (let i = 0; i < out.length; i++) if (i === 0 || out[i] !== out[unique - 1]) out[unique++] = out[i]!;
    return out.subarray(0, unique);
  }

  /** The signature of `text`, written into `out` when given. */
  signature(text: string, out: Uint32Array = new Uint32Array(this.numPerm)): Uint32Array {
    return this.signatureOf(this.shingles(text), out);
  }

  signatureOf(shingles: Uint32Array, out: Uint32Array = new Uint32Array(this.numPerm)): Uint32Array {
    const n = shingles.length;
    for (let p = 0; p < this.numPerm; p++) {
      const a = this.multipliers[p]!;
      const b = this.offsets[p]!;
      let min = 0xffffffff;
      for (let s = 0; s < n; s++) {
        // one round of xor-multiply-xorshift per permutation; the shingle hashes are already mixed
        let v = Math.imul(shingles[s]! ^ b, a);
        v = (v ^ (v >>> 15)) >>> 0;
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
