// Locality-sensitive hashing over MinHash signatures: the signature is cut into `bands` of `rows`
// values; two documents become candidates when any band is identical. Candidates are then checked
// against the threshold with the full signature, so LSH only decides who is compared, not who matches.
import { combine } from "./hash.js";

export interface LshParameters {
  bands: number;
  rows: number;
}

/**
 * A false positive only costs one full-signature comparison, a false negative keeps a duplicate: the
 * split is chosen to miss few pairs above the threshold at the price of more candidates below it.
 */
const FALSE_POSITIVE_WEIGHT = 0.2;

/**
 * The bands x rows split of `numPerm` that minimises the weighted probability mass of false positives
 * below `threshold` and false negatives above it (the optimisation datasketch does, with weights).
 */
export function optimalLshParameters(threshold: number, numPerm: number): LshParameters {
  const integrate = (f: (s: number) => number, from: number, to: number): number => {
    const steps = 200;
    const width = (to - from) / steps;
    let area = 0;
    for (let i = 0; i < steps; i++) area += f(from + (i + 0.5) * width) * width;
    return area;
  };
  let best: LshParameters = { bands: 1, rows: numPerm };
  let bestError = Number.POSITIVE_INFINITY;
  for (let bands = 1; bands <= numPerm; bands++) {
    const maxRows = Math.floor(numPerm / bands);
    for (let rows = 1; rows <= maxRows; rows++) {
      const falsePositive = integrate((s) => 1 - (1 - s ** rows) ** bands, 0, threshold);
      const falseNegative = integrate((s) => (1 - s ** rows) ** bands, threshold, 1);
      const error = FALSE_POSITIVE_WEIGHT * falsePositive + (1 - FALSE_POSITIVE_WEIGHT) * falseNegative;
      if (error < bestError) {
        bestError = error;
        best = { bands, rows };
      }
    }
  }
  return best;
}

/**
 * Buckets of document numbers per band, in flat typed arrays (an open-addressing table per band plus a
 * linked list through `next`), so a few hundred thousand documents cost megabytes, not a Map each.
 */
export class LshIndex {
  readonly params: LshParameters;
  private capacity = 1 << 12;
  private keys: Uint32Array[];
  private heads: Int32Array[];
  private next: Int32Array;
  private size = 0;

  constructor(params: LshParameters) {
    this.params = params;
    this.keys = Array.from({ length: params.bands }, () => new Uint32Array(this.capacity));
    this.heads = Array.from({ length: params.bands }, () => new Int32Array(this.capacity).fill(-1));
    this.next = new Int32Array(1024 * params.bands);
  }

  /** Number of documents indexed; documents are numbered 0, 1, 2... in insertion order. */
  get count(): number {
    return this.size;
  }

  bandKeys(signature: Uint32Array, out: Uint32Array = new Uint32Array(this.params.bands)): Uint32Array {
    const { bands, rows } = this.params;
    for (let b = 0; b < bands; b++) {
      let h = b + 1;
      for (let r = 0; r < rows; r++) h = combine(h, signature[b * rows + r]!);
      out[b] = h;
    }
    return out;
  }

  /** Calls `visit` with each indexed document sharing a band with `keys` (possibly more than once). */
  forEachCandidate(keys: Uint32Array, visit: (doc: number) => boolean | undefined): void {
    const mask = this.capacity - 1;
    for (let b = 0; b < this.params.bands; b++) {
      const table = this.keys[b]!;
      const heads = this.heads[b]!;
      const key = keys[b]!;
      for (let slot = key & mask; heads[slot] !== -1; slot = (slot + 1) & mask) {
        if (table[slot] !== key) continue;
        for (let doc = heads[slot]!; doc !== -1; doc = this.next[doc * this.params.bands + b]!) {
          if (visit(doc) === true) return;
        }
        break;
      }
    }
  }

  /** Indexes the next document under `keys`; returns its number. */
  insert(keys: Uint32Array): number {
    const doc = this.size++;
    const { bands } = this.params;
    if ((doc + 1) * bands > this.next.length) {
      const grown = new Int32Array(this.next.length * 2);
      grown.set(this.next);
      this.next = grown;
    }
    // keep the tables at most half full so probes stay short
    if (this.size * 2 > this.capacity) this.grow();
    const mask = this.capacity - 1;
    for (let b = 0; b < bands; b++) {
      const table = this.keys[b]!;
      const heads = this.heads[b]!;
      const key = keys[b]!;
      let slot = key & mask;
      while (heads[slot] !== -1 && table[slot] !== key) slot = (slot + 1) & mask;
      this.next[doc * bands + b] = heads[slot]!;
      table[slot] = key;
      heads[slot] = doc;
    }
    return doc;
  }

  private grow(): void {
    const oldKeys = this.keys;
    const oldHeads = this.heads;
    const oldCapacity = this.capacity;
    this.capacity *= 2;
    const mask = this.capacity - 1;
    this.keys = [];
    this.heads = [];
    for (let b = 0; b < this.params.bands; b++) {
      const table = new Uint32Array(this.capacity);
      const heads = new Int32Array(this.capacity).fill(-1);
      for (let i = 0; i < oldCapacity; i++) {
        const head = oldHeads[b]![i]!;
        if (head === -1) continue;
        const key = oldKeys[b]![i]!;
        let slot = key & mask;
        while (heads[slot] !== -1) slot = (slot + 1) & mask;
        table[slot] = key;
        heads[slot] = head;
      }
      this.keys.push(table);
      this.heads.push(heads);
    }
  }
}
