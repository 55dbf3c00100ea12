// A sentence model run in-process by transformers.js (@huggingface/transformers, ONNX Runtime): one
// forward pass per padded, truncated batch, then the mean of the token vectors under the attention
// mask (sentence-transformers' pooling for the BERT-base NLI models the paper's "BERT-base
// embeddings" stand for). The caller normalises. Why not @xenova/transformers: docs/pack.md.
import os from "node:os";
import path from "node:path";
import type { HubConfig } from "../hub/config.js";
import type { Logger } from "../log.js";
import type { TransformersEmbedderConfig } from "./config.js";
import { checkModelDir, fetchModelFiles, type ModelFiles, ModelMissingError } from "./model-files.js";
import type { Embedder, RawEmbedding } from "./types.js";

type Transformers = typeof import("@huggingface/transformers");
type Tokenizer = Awaited<ReturnType<Transformers["AutoTokenizer"]["from_pretrained"]>>;
type Model = Awaited<ReturnType<Transformers["AutoModel"]["from_pretrained"]>>;

interface TensorLike {
  dims: number[];
  data: Float32Array | BigInt64Array;
}

export class TransformersEmbedder implements Embedder {
  readonly concurrency = 1;

  private constructor(
    private readonly tokenizer: Tokenizer,
    private readonly encoder: Model,
    readonly model: string,
    readonly batchSize: number,
    /** hidden size from the model's config.json */
    readonly dimension: number,
    readonly maxTokens: number,
  ) {}

  static async load(
    config: TransformersEmbedderConfig,
    context: { hub: HubConfig; dataDir: string; signal?: AbortSignal | undefined; log?: Logger | undefined },
  ): Promise<TransformersEmbedder> {
    let files: ModelFiles;
    if (config.local_dir !== undefined) {
      const dir = path.resolve(config.local_dir);
      await checkModelDir(dir, config.dtype, `embedding model directory ${config.local_dir}`);
      files = { dir, commit: undefined };
    } else {
      files = await fetchModelFiles(config, context.hub, context.dataDir, context);
    }
    const { AutoModel, AutoTokenizer } = await import("@huggingface/transformers");
    const threads = config.threads ?? Math.max(1, os.availableParallelism());
    const tokenizer = await AutoTokenizer.from_pretrained(files.dir, { local_files_only: true });
    const encoder = await AutoModel.from_pretrained(files.dir, {
      local_files_only: true,
      dtype: config.dtype,
      device: "cpu",
      session_options: { intraOpNumThreads: threads, interOpNumThreads: 1 },
    });
    const modelConfig = encoder.config as unknown as {
      hidden_size?: number;
      max_position_embeddings?: number;
    };
    const tokenizerMax = (tokenizer as unknown as { model_max_length?: number }).model_max_length;
    // Tokenizers without a limit say 1e30; the position table is the real one.
    const modelLimits = [tokenizerMax, modelConfig.max_position_embeddings].filter(
      (n): n is number => typeof n === "number" && Number.isFinite(n) && n > 0 && n < 1e9,
    );
    // An explicit max_tokens is honoured up to the model's limit; unset, inputs are cut at 512 at
    // most (BERT's window), since long-context models cost quadratic time for a query's gist.
    const maxTokens = Math.min(config.max_tokens ?? 512, ...modelLimits);
    const dimension = modelConfig.hidden_size;
    if (typeof dimension !== "number") {
      throw new ModelMissingError(
        `embedding model in ${files.dir}: config.json has no hidden_size, so it is not an encoder whose ` +
          "token vectors can be mean-pooled; choose a sentence-embedding model (docs/pack.md lists some)",
      );
    }
    // Everything that changes a vector: which model and weights, and where inputs are cut.
    const source = config.local_dir !== undefined ? `dir:${files.dir}` : `${config.model}@${files.commit}`;
    const model = `transformers:${source}:${config.dtype}:max${maxTokens}:mean`;
    context.log?.info(
      `embedder: ${config.local_dir ?? config.model} (${config.dtype}, ${dimension}-d, inputs cut at ${maxTokens} tokens, ${threads} threads)`,
    );
    return new TransformersEmbedder(tokenizer, encoder, model, config.batch_size, dimension, maxTokens);
  }

  async embed(texts: readonly string[]): Promise<RawEmbedding[]> {
    const encoded = this.tokenizer([...texts], {
      padding: true,
      truncation: true,
      max_length: this.maxTokens,
    }) as unknown as Record<string, TensorLike>;
    const output = (await this.encoder(encoded)) as Record<string, TensorLike>;
    const hidden = output.last_hidden_state ?? output.token_embeddings;
    if (!hidden) throw new Error(`embedding model ${this.model} returned no last_hidden_state`);
    const mask = encoded.attention_mask!.data as BigInt64Array;
    const pooled = meanPool(hidden.data as Float32Array, mask, hidden.dims);
    return pooled.map((vector, i) => {
      const tokens = countMask(mask, i, hidden.dims[1]!);
      return { vector, tokens, truncated: tokens >= this.maxTokens && this.longerThanMax(texts[i]!) };
    });
  }

  /** Only inputs that fill the window exactly are re-tokenized whole, to tell cut from fitting. */
  private longerThanMax(text: string): boolean {
    const whole = this.tokenizer(text, { truncation: false }) as unknown as Record<string, TensorLike>;
    return whole.input_ids!.dims[1]! > this.maxTokens;
  }

  async close(): Promise<void> {
    await this.encoder.dispose();
  }
}

function countMask(mask: BigInt64Array, row: number, seq: number): number {
  let n = 0;
  for (let t = 0; t < seq; t++) if (mask[row * seq + t] !== 0n) n++;
  return n;
}

/** Mean of each row's token vectors where the attention mask is 1. */
export function meanPool(hidden: Float32Array, mask: BigInt64Array, dims: number[]): Float32Array[] {
  const [batch, seq, width] = dims as [number, number, number];
  const out: Float32Array[] = [];
  for (let b = 0; b < batch; b++) {
    const sum = new Float32Array(width);
    let count = 0;
    for (let t = 0; t < seq; t++) {
      if (mask[b * seq + t] === 0n) continue;
      count++;
      const base = (b * seq + t) * width;
      for (let d = 0; d < width; d++) sum[d]! += hidden[base + d]!;
    }
    if (count > 0) for (let d = 0; d < width; d++) sum[d]! /= count;
    out.push(sum);
  }
  return out;
}
