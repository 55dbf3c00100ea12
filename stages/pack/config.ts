// `stages.pack` in the config. Defaults are the paper's rule as its table counts it (4 nearest
// neighbours, one of them joins a query: 2.0 turns per dialogue) with a BERT-base sentence model;
// which records are packed is ours to choose (the paper packed the Python ones; by default every
// language, each packed within itself).
import { z } from "zod";
import {
  embedderConfigSchema,
  embeddingCacheSchema,
  knnConfigSchema,
  transformersEmbedderSchema,
} from "../../pipeline/embed/config.js";

export const packConfigSchema = z
  .object({
    /** `all`, or the languages (as filter's `lang`) whose records are packed; the paper: [python] */
    languages: z.union([z.literal("all"), z.array(z.string().min(1)).min(1)]).default("all"),
    /** true: neighbours are searched within a record's own language, so no dialogue mixes languages */
    within_language: z.boolean().default(true),
    /** nearest neighbours looked at per query (the query itself and exact duplicates excluded) */
    neighbours: z.number().int().min(1).max(64).default(4),
    /**
     * how many unused neighbours may join a query; one size is drawn among those that fit. [1], the
     * default, is the reading that gives the paper's table (33.5K turns in 16.6K dialogues: 2.0 turns
     * per dialogue); [2, 3] is its text's reading (3 or 4 turns); docs/pack.md says why
     */
    join: z.array(z.number().int().min(1).max(64)).min(1).default([1]),
    /** seed of the visiting order and of the draws: the same seed gives the same dialogues */
    seed: z.number().int().min(0).default(42),
    /** longer queries are rejected (`query-too-long`) rather than embedded */
    max_query_chars: z.number().int().positive().default(32_000),
    embedder: embedderConfigSchema.default(transformersEmbedderSchema.parse({ kind: "transformers" })),
    knn: knnConfigSchema.default(knnConfigSchema.parse({})),
    cache: embeddingCacheSchema.default(embeddingCacheSchema.parse({})),
  })
  .strict()
  .superRefine((c, ctx) => {
    const tooMany = c.join.filter((s) => s > c.neighbours);
    if (tooMany.length > 0) {
      ctx.addIssue({
        code: "custom",
        path: ["join"],
        message: `join sizes ${tooMany.join(", ")} exceed neighbours (${c.neighbours}); a query can only be joined by its neighbours`,
      });
    }
  });
export type PackConfig = z.infer<typeof packConfigSchema>;
