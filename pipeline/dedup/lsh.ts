// Locality-sensitive hashing over MinHash signatures: the signature is cut into `bands` of `rows`
// values; two documents become candidates when any band is identical. Candidates are then checked
// against the threshold with the full signature, so LSH only decides who is compared, not who matches.
import { mix32 } from "../random.js";

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
 * A slot is two neighbouring int32s, the band key and 1 + the bucket's latest document (0: empty), so
 * a probe touches one cache line and a new table needs no filling.
 */
export class LshIndex {
  readonly params: LshParameters;
  private capacity = 1 << 12;
  private tables: Int32Array[];
  private next: Int32Array;
  private size = 0;

  constructor(params: LshParameters) {
    this.params = params;
    this.tables = Array.from({ length: params.bands }, () => new Int32Array(2 * this.capacity));
    this.next = new Int32Array(1024 * params.bands);
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
    const bands = this.params.bands;
    for (let b = 0; b < bands; b++) {
      const table = this.tables[b]!;
      const key = keys[b]! | 0;
      for (let slot = key & mask; table[2 * slot + 1] !== 0; slot = (slot + 1) & mask) {
        if (table[2 * slot] !== key) continue;
        for (let doc = table[2 * slot + 1]! - 1; doc !== -1; doc = this.next[doc * bands + b]!) {
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
      const table = this.tables[b]!;
      const key = keys[b]! | 0;
      let slot = key & mask;
      while (table[2 * slot + 1] !== 0 && table[2 * slot] !== key) slot = (slot + 1) & mask;
      this.next[doc * bands + b] = table[2 * slot + 1]! - 1;
      table[2 * slot] = key;
      table[2 * slot + 1] = doc + 1;
    }
    return doc;
  }

  private grow(): void {
    const oldCapacity = this.capacity;
    this.capacity *= 2;
    const mask = this.capacity - 1;
    this.tables = this.tables.map((old) => {
      const table = new Int32Array(2 * this.capacity);
      for (let i = 0; i < oldCapacity; i++) {
        const head = old[2 * i + 1]!;
        if (head === 0) continue;
        const key = old[2 * i]!;
        let slot = key & mask;
        while (table[2 * slot + 1] !== 0) slot = (slot + 1) & mask;
        table[2 * slot] = key;
        table[2 * slot + 1] = head;
      }
      return table;
    });
  }
}

/** Combines a running hash with one more value (order matters). */
function combine(h: number, value: number): number {
  return mix32(Math.imul(h ^ value, 0x9e3779b1) + 0x7f4a7c15);
}
