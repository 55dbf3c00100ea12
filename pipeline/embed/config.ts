// How a stage configures its embedder and its kNN index. One `embedder` section, chosen by `kind`:
// `transformers` (an ONNX sentence model run in-process by transformers.js), `openai` (any
// OpenAI-compatible /v1/embeddings server: TEI, vLLM, OpenAI) or `lexical` (hashed word and character
// n-grams, for machines with no model; it is never chosen for you). Every key has a default except
// the model of the two model kinds.
import { z } from "zod";
import { operational } from "../hash.js";

export const transformersEmbedderSchema = z
  .object({
    kind: z.literal("transformers"),
    /** a hub model id (fetched through `hub:`, i.e. HF_ENDPOINT and the token) with ONNX weights in `onnx/` */
    model: z.string().min(1).default("Xenova/bert-base-nli-mean-tokens"),
    revision: z.string().min(1).default("main"),
    /** a local model directory (config.json, tokenizer.json, onnx/model.onnx) used instead of the hub */
    local_dir: z.string().min(1).optional(),
    /** which ONNX weights: fp32 `onnx/model.onnx`, q8 `model_quantized.onnx`, fp16 `model_fp16.onnx` */
    dtype: z.enum(["fp32", "fp16", "q8"]).default("fp32"),
    /** tokens per input, up to the model's maximum; longer inputs are truncated (and say so); default: the model's maximum, at most 512 */
    max_tokens: z.number().int().positive().optional(),
    /** texts per forward pass */
    batch_size: z.number().int().positive().max(4096).default(32),
    /** ONNX Runtime intra-op threads; default: the machine's cores */
    threads: z.number().int().positive().max(256).optional(),
  })
  .strict();

export const openaiEmbedderSchema = z
  .object({
    kind: z.literal("openai"),
    model: z.string().min(1),
    /** e.g. `http://127.0.0.1:8080/v1` (TEI, vLLM); unset: the variable named by `base_url_env` */
    base_url: z.string().url().optional(),
    base_url_env: z.string().min(1).default("OPENAI_EMBEDDINGS_BASE_URL"),
    api_key_env: z.string().min(1).default("OPENAI_API_KEY"),
    /** asked of models that can shorten their vectors (OpenAI text-embedding-3) */
    dimensions: z.number().int().positive().optional(),
    batch_size: z.number().int().positive().max(2048).default(128),
    /** requests in flight at once */
    concurrency: operational(z.number().int().positive().max(256).default(4)),
    timeout_s: operational(z.number().positive().default(120)),
    retries: operational(z.number().int().min(0).max(20).default(4)),
    /** how long a server that never answered (not up yet, a wrong address) is tried before the run stops */
    probe_s: operational(z.number().positive().default(30)),
  })
  .strict();

export const lexicalEmbedderSchema = z
  .object({
    kind: z.literal("lexical"),
    /** vector length (hash buckets) */
    dimensions: z.number().int().min(16).max(65_536).default(768),
    /** word n-gram sizes and character n-gram sizes hashed into the buckets */
    word_ngrams: z.array(z.number().int().min(1).max(5)).default([1, 2]),
    char_ngrams: z.array(z.number().int().min(2).max(8)).default([3, 4]),
    batch_size: z.number().int().positive().default(1024),
  })
  .strict();

export const embedderConfigSchema = z.discriminatedUnion("kind", [
  transformersEmbedderSchema,
  openaiEmbedderSchema,
  lexicalEmbedderSchema,
]);
export type EmbedderConfig = z.infer<typeof embedderConfigSchema>;
export type TransformersEmbedderConfig = z.infer<typeof transformersEmbedderSchema>;
export type OpenAIEmbedderConfig = z.infer<typeof openaiEmbedderSchema>;
export type LexicalEmbedderConfig = z.infer<typeof lexicalEmbedderSchema>;

export const knnConfigSchema = z
  .object({
    /** hnswlib graph degree */
    M: z.number().int().min(2).max(128).default(16),
    /** candidate list while building; higher builds slower and finds more true neighbours */
    ef_construction: z.number().int().min(8).max(2048).default(200),
    /** candidate list while searching (at least the neighbours asked for) */
    ef: z.number().int().min(8).max(4096).default(64),
    /** seed of the index's random levels, so a rebuilt index is the same graph */
    seed: z.number().int().min(0).default(100),
  })
  .strict();
export type KnnConfig = z.infer<typeof knnConfigSchema>;

export const embeddingCacheSchema = z
  .object({
    /** SQLite file of every computed vector, keyed by model and text hash; relative to data_dir */
    path: z.string().min(1).default("embed-cache.sqlite"),
  })
  .strict();
