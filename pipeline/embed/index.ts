// Embedders and the kNN index, as a stage uses them: `createEmbedder(config)` gives the configured
// embedder (loading a model only when the config asks for one), `embedTexts` embeds through the
// on-disk cache, `KnnIndex` finds neighbours.
import type { HubConfig } from "../hub/config.js";
import type { Logger } from "../log.js";
import type { EmbedderConfig } from "./config.js";
import { LexicalEmbedder } from "./lexical.js";
import { OpenAIEmbedder } from "./openai.js";
import type { Embedder } from "./types.js";

export { EmbeddingCache, embeddingKey } from "./cache.js";
export * from "./config.js";
export { type EmbeddingOutcome, type EmbedStats, embedTexts } from "./embed-texts.js";
export { KnnIndex, type Neighbour } from "./knn.js";
export type { Embedder, EmbeddingProblem, RawEmbedding } from "./types.js";

export interface EmbedderContext {
  hub: HubConfig;
  dataDir: string;
  signal?: AbortSignal | undefined;
  log?: Logger | undefined;
}

export async function createEmbedder(
  config: EmbedderConfig,
  context: EmbedderContext,
): Promise<Embedder & { dimension?: number | undefined }> {
  switch (config.kind) {
    case "lexical":
      return new LexicalEmbedder(config);
    case "openai":
      return new OpenAIEmbedder(config);
    case "transformers": {
      // loaded on demand: ONNX Runtime and the tokenizers are not small, and other kinds need neither
      const { TransformersEmbedder } = await import("./transformers.js");
      return TransformersEmbedder.load(config, context);
    }
  }
}
