// An embedder with no model: word n-grams and character n-grams of the lower-cased text, each hashed
// into one of `dimensions` buckets with a hashed sign (the "hashing trick"), weighted by 1 + log of
// their count. Two queries that share words and identifiers land close in cosine distance; meaning
// beyond shared surface forms is lost. It exists for machines with no model and for fast trials, and
// is only ever used when the config says `kind: lexical`, never as a silent fallback.
import type { LexicalEmbedderConfig } from "./config.js";
import type { Embedder, RawEmbedding } from "./types.js";

// FNV-1a over UTF-16 code units: fast, stable across runs and platforms.
function fnv1a(text: string, seed: number): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

const WORD = /[\p{L}\p{N}_]+|[^\s\p{L}\p{N}_]/gu;

export class LexicalEmbedder implements Embedder {
  readonly model: string;
  readonly batchSize: number;
  readonly concurrency = 1;
  readonly dimension: number;

  constructor(private readonly config: LexicalEmbedderConfig) {
    this.dimension = config.dimensions;
    this.batchSize = config.batch_size;
    this.model = `lexical:v1:d${config.dimensions}:w${config.word_ngrams.join(",")}:c${config.char_ngrams.join(",")}`;
  }

  async embed(texts: readonly string[]): Promise<RawEmbedding[]> {
    return texts.map((text) => ({ vector: this.vectorOf(text), truncated: false }));
  }

  vectorOf(text: string): Float32Array {
    const counts = new Map<string, number>();
    const add = (gram: string) => counts.set(gram, (counts.get(gram) ?? 0) + 1);
    const lower = text.toLowerCase();
    const words = lower.match(WORD) ?? [];
    for (const n of this.config.word_ngrams) {
      for (let i = 0; i + n <= words.length; i++) add(`w${n}:${words.slice(i, i + n).join(" ")}`);
    }
    const squeezed = ` ${lower.replace(/\s+/g, " ").trim()} `;
    for (const n of this.config.char_ngrams) {
      for (let i = 0; i + n <= squeezed.length; i++) add(`c:${squeezed.slice(i, i + n)}`);
    }
    const vector = new Float32Array(this.dimension);
    for (const [gram, count] of counts) {
      const bucket = fnv1a(gram, 0) % this.dimension;
      const sign = fnv1a(gram, 0x9e3779b9) & 1 ? 1 : -1;
      vector[bucket]! += sign * (1 + Math.log(count));
    }
    return vector;
  }

  async close(): Promise<void> {}
}
