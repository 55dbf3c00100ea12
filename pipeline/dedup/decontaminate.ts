// Benchmark decontamination: a query that shares too many word n-grams with a benchmark prompt
// (HumanEval, MBPP, ...) is dropped, naming the benchmark item. Overlap is measured against the
// shorter of the two texts, so both "the query quotes the whole prompt" and "the query is a piece of
// the prompt" count.
import { gramHash, wordGrams, wordHashes } from "./text.js";

/** Shared n-grams are counted once each, and texts shorter than n words cannot be judged. */
const DISTINCT_GRAMS = { allowShort: false, distinct: true };

export interface BenchmarkItem {
  /** the benchmark set, e.g. `humaneval` */
  benchmark: string;
  /** the item's own id there, e.g. `HumanEval/12` */
  id: string;
  text: string;
}

export interface ContaminationHit {
  item: BenchmarkItem;
  /** shared n-grams / n-grams of the shorter text, in [0, 1] */
  overlap: number;
  shared: number;
}

export class NgramIndex {
  readonly n: number;
  private readonly items: BenchmarkItem[] = [];
  private readonly sizes: number[] = [];
  private readonly postings = new Map<number, number[]>();

  constructor(n: number) {
    this.n = n;
  }

  /** Adds a benchmark item; items too short to have an n-gram cannot match and are skipped (false). */
  add(item: BenchmarkItem): boolean {
    const grams = wordGrams(wordHashes(item.text), this.n, DISTINCT_GRAMS);
    if (grams.length === 0) return false;
    const index = this.items.length;
    this.items.push(item);
    this.sizes.push(grams.length);
    for (const g of grams) {
      const list = this.postings.get(g);
      if (list) list.push(index);
      else this.postings.set(g, [index]);
    }
    return true;
  }

  /** The benchmark item `text` overlaps most, if that overlap reaches `threshold`. */
  match(text: string, threshold: number): ContaminationHit | undefined {
    return this.matchWords(wordHashes(text), threshold);
  }

  /** `match` from the text's word hashes (see `wordHashes`), when the caller has them already. */
  matchWords(hashes: Uint32Array, threshold: number): ContaminationHit | undefined {
    if (this.items.length === 0 || !this.sharesAny(hashes)) return undefined;
    const grams = wordGrams(hashes, this.n, DISTINCT_GRAMS);
    if (grams.length === 0) return undefined;
    const shared = new Map<number, number>();
    for (const g of grams) {
      const list = this.postings.get(g);
      if (!list) continue;
      for (const item of list) shared.set(item, (shared.get(item) ?? 0) + 1);
    }
    let best = -1;
    let bestOverlap = 0;
    let bestShared = 0;
    for (const [item, count] of shared) {
      const overlap = count / Math.min(grams.length, this.sizes[item]!);
      if (overlap < threshold) continue;
      // ties go to the item added first, so the named item does not depend on Map order
      if (best === -1 || overlap > bestOverlap || (overlap === bestOverlap && item < best)) {
        best = item;
        bestOverlap = overlap;
        bestShared = count;
      }
    }
    return best === -1 ? undefined : { item: this.items[best]!, overlap: bestOverlap, shared: bestShared };
  }

  /**
   * Whether any n-gram of the text is indexed. Almost no query shares one with a benchmark, and this
   * answers for them without building, sorting and counting the query's n-grams.
   */
  private sharesAny(hashes: Uint32Array): boolean {
    const count = hashes.length - this.n + 1;
    for (let s = 0; s < count; s++) if (this.postings.has(gramHash(hashes, s, this.n))) return true;
    return false;
  }
}
