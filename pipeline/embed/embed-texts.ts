// Embedding a whole input once for all embedders: look every text up in the cache, sort the rest by
// length (a batch of similar lengths wastes little on padding), embed batch by batch, check each
// vector (finite, the model's dimension, not all zeros), L2-normalise it, and commit the batch to the
// cache before going on. A rerun finds every vector in the cache; a killed run loses only the
// batches in flight. Identical texts are embedded once.
import { InterruptedError } from "../errors.js";
import { type CachedEmbedding, type EmbeddingCache, embeddingKey } from "./cache.js";
import type { Embedder, EmbeddingProblem, RawEmbedding } from "./types.js";

export type EmbeddingOutcome = ({ ok: true } & CachedEmbedding) | ({ ok: false } & EmbeddingProblem);

export interface EmbedStats {
  texts: number;
  cached: number;
  computed: number;
  batches: number;
  truncated: number;
  problems: number;
}

export interface EmbedTextsOptions {
  signal?: AbortSignal | undefined;
  /** called after each batch with texts done so far (cached ones count at once) */
  onProgress?: ((done: number, total: number) => void) | undefined;
  /** the model's dimension when known up front; otherwise the most common one of the first batch (in length order) */
  dimension?: number | undefined;
}

/** Checks a raw vector and returns it normalised, or what is wrong with it. */
export function checkVector(raw: Float32Array, dimension: number): Float32Array | EmbeddingProblem {
  if (raw.length !== dimension) {
    return {
      reason: "embedding-wrong-dimension",
      detail: `the model returned ${raw.length} numbers where its other vectors have ${dimension}`,
    };
  }
  let norm = 0;
  for (let i = 0; i < raw.length; i++) {
    const x = raw[i]!;
    if (!Number.isFinite(x)) {
      return { reason: "embedding-not-finite", detail: `the model returned ${x} at position ${i}` };
    }
    norm += x * x;
  }
  if (norm === 0) return { reason: "embedding-zero", detail: "the model returned a vector of zeros" };
  const scale = 1 / Math.sqrt(norm);
  const out = new Float32Array(raw.length);
  for (let i = 0; i < raw.length; i++) out[i] = raw[i]! * scale;
  return out;
}

function mostCommonLength(answers: readonly (RawEmbedding | { refused: string })[]): number | undefined {
  const counts = new Map<number, number>();
  for (const a of answers)
    if ("vector" in a) counts.set(a.vector.length, (counts.get(a.vector.length) ?? 0) + 1);
  let best: number | undefined;
  for (const [length, n] of counts) if (best === undefined || n > counts.get(best)!) best = length;
  return best;
}

/** One outcome per text, in input order. */
export async function embedTexts(
  texts: readonly string[],
  embedder: Embedder,
  cache: EmbeddingCache,
  options: EmbedTextsOptions = {},
): Promise<{ outcomes: EmbeddingOutcome[]; stats: EmbedStats; dimension: number | undefined }> {
  const outcomes: (EmbeddingOutcome | undefined)[] = new Array(texts.length);
  const stats: EmbedStats = {
    texts: texts.length,
    cached: 0,
    computed: 0,
    batches: 0,
    truncated: 0,
    problems: 0,
  };
  let dimension = options.dimension;
  // text -> positions still waiting for it, so duplicates are embedded once
  const waiting = new Map<string, { key: Buffer; positions: number[] }>();
  for (const [i, text] of texts.entries()) {
    const pending = waiting.get(text);
    if (pending) {
      pending.positions.push(i);
      continue;
    }
    const key = embeddingKey(embedder.model, text);
    const hit = cache.get(key);
    if (hit) {
      outcomes[i] = { ok: true, ...hit };
      stats.cached++;
      dimension ??= hit.vector.length;
    } else waiting.set(text, { key, positions: [i] });
  }

  const todo = [...waiting].sort((a, b) => a[0].length - b[0].length || (a[0] < b[0] ? -1 : 1));
  let done = texts.length - todo.reduce((n, [, w]) => n + w.positions.length, 0);
  options.onProgress?.(done, texts.length);

  const batches: (typeof todo)[] = [];
  for (let i = 0; i < todo.length; i += embedder.batchSize)
    batches.push(todo.slice(i, i + embedder.batchSize));

  const finish = (batch: typeof todo, answers: (RawEmbedding | { refused: string })[]) => {
    dimension ??= mostCommonLength(answers);
    const rows: { key: Buffer; model: string; value: CachedEmbedding }[] = [];
    for (const [j, [, { key, positions }]] of batch.entries()) {
      const answer = answers[j]!;
      let outcome: EmbeddingOutcome;
      if ("refused" in answer) {
        outcome = { ok: false, reason: "embedding-refused", detail: answer.refused };
      } else {
        const checked = checkVector(answer.vector, dimension ?? answer.vector.length);
        if (checked instanceof Float32Array) {
          const value = { vector: checked, tokens: answer.tokens, truncated: answer.truncated };
          rows.push({ key, model: embedder.model, value });
          outcome = { ok: true, ...value };
        } else outcome = { ok: false, ...checked };
      }
      for (const p of positions) outcomes[p] = outcome;
      done += positions.length;
    }
    // committed before anything uses these vectors: a rerun never computes them again
    cache.putMany(rows);
    stats.computed += batch.length;
    stats.batches++;
    options.onProgress?.(done, texts.length);
  };

  const embedBatch = async (batch: typeof todo) => {
    const answers = await embedder.embed(
      batch.map(([text]) => text),
      options.signal,
    );
    if (answers.length !== batch.length) {
      throw new Error(
        `embedder ${embedder.model} answered ${answers.length} vectors for ${batch.length} texts; ` +
          "an embeddings server must answer one vector per input: check that it is one (TEI, vLLM, OpenAI)",
      );
    }
    finish(batch, answers);
  };
  // In-process models run one batch at a time; endpoints take `concurrency` batches in flight. When
  // the dimension is not known up front, the first batch sets it before any other is in flight:
  // otherwise whichever batch answered first would decide which vectors have the wrong length.
  let next = 0;
  if (dimension === undefined && batches.length > 0 && !options.signal?.aborted)
    await embedBatch(batches[next++]!);
  const worker = async () => {
    while (next < batches.length) {
      if (options.signal?.aborted) return;
      await embedBatch(batches[next++]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(embedder.concurrency, batches.length - next) }, worker));
  if (options.signal?.aborted) {
    throw new InterruptedError(
      "interrupted while embedding; the vectors computed so far are cached: rerun to continue",
    );
  }
  const final = outcomes as EmbeddingOutcome[];
  for (const o of final) {
    if (o.ok && o.truncated) stats.truncated++;
    if (!o.ok) stats.problems++;
  }
  return { outcomes: final, stats, dimension };
}
