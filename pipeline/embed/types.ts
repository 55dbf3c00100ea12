// What every embedder is to the rest of the pipeline: a model name (part of the cache key, so it must
// name everything that changes a vector) and a batch call that returns one raw vector per text, in
// order. Checking, normalising, batching and caching are done once for all in `embed-texts.ts`.

/** One text's raw embedding, as the model gave it. */
export interface RawEmbedding {
  vector: Float32Array;
  /** tokens the model saw (after truncation), when the model says */
  tokens?: number | undefined;
  /** true when the text was cut to the model's maximum length */
  truncated: boolean;
}

export interface Embedder {
  /** cache identity: kind, model, revision and whatever else changes the vectors */
  readonly model: string;
  /** preferred texts per `embed` call */
  readonly batchSize: number;
  /** texts whose `embed` calls may be in flight at once (one batch for in-process models) */
  readonly concurrency: number;
  /** one answer per text, in order; `refused` when the model turned down that one text (e.g. HTTP 400) */
  embed(texts: readonly string[], signal?: AbortSignal): Promise<(RawEmbedding | { refused: string })[]>;
  close(): Promise<void>;
}

/** A model answer that cannot be used for this one text (NaN, wrong dimension, all zeros). */
export interface EmbeddingProblem {
  reason: "embedding-not-finite" | "embedding-wrong-dimension" | "embedding-zero" | "embedding-refused";
  detail: string;
}
