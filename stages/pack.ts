// The paper's single-turn packing: "BERT-base embeddings of the queries; for each query its 4 nearest
// neighbours by kNN; 2 or 3 of them chosen at random to form one multi-turn sequence with it". The
// table's 2.0 turns per dialogue fit one neighbour, so that is the default (`join: [1]`; docs/pack.md).
// The queries are embedded through a disk cache, each language's vectors (or all) go into an HNSW
// index in the work dir, and the packing rule (pack/packing.ts) makes the dialogues.
import { createHash } from "node:crypto";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { makeDialogue } from "../pipeline/dialogue.js";
import type { CachedEmbedding } from "../pipeline/embed/cache.js";
import { createEmbedder, EmbeddingCache, embedTexts, KnnIndex } from "../pipeline/embed/index.js";
import { outputsStep } from "../pipeline/report/flow.js";
import { defineStage, type Emitter, type StageContext } from "../pipeline/stage.js";
import { type PackConfig, packConfigSchema } from "./pack/config.js";
import { type PackResult, packSimilarQueries } from "./pack/packing.js";
import { type Single, validateSingles } from "./pack/singles.js";
import {
  type PackStats,
  type PackSummary,
  packSummarySchema,
  SINGLE_TURN_PACKING,
  summarizePack,
} from "./pack/summary.js";

type PackContext = StageContext<PackConfig>;

/** A long step's progress, logged at most every ten seconds: `line` gets the counts written out. */
function everyTenSeconds(ctx: PackContext, line: (done: string, total: string) => string) {
  let last = Date.now();
  return (done: number, total: number) => {
    if (Date.now() - last < 10_000) return;
    last = Date.now();
    ctx.log.info(line(done.toLocaleString("en-US"), total.toLocaleString("en-US")));
  };
}

/** Embeds every query through the cache; records whose vector is unusable become rejects. */
async function embedQueries(ctx: PackContext, singles: Single[], emit: Emitter, stats: PackStats) {
  const embedder = await createEmbedder(ctx.config.embedder, {
    hub: ctx.root.hub,
    dataDir: ctx.dataDir,
    signal: ctx.signal,
    log: ctx.log,
  });
  const cache = new EmbeddingCache(path.resolve(ctx.dataDir, ctx.config.cache.path));
  try {
    const { outcomes, stats: embedStats } = await embedTexts(
      singles.map((s) => s.query),
      embedder,
      cache,
      {
        signal: ctx.signal,
        dimension: embedder.dimension,
        onProgress: everyTenSeconds(ctx, (done, total) => `embedded ${done} of ${total} queries`),
      },
    );
    stats.embedding = { model: embedder.model, ...embedStats };
    const embedded: { single: Single; embedding: CachedEmbedding }[] = [];
    for (const [i, outcome] of outcomes.entries()) {
      const single = singles[i]!;
      if (outcome.ok) embedded.push({ single, embedding: outcome });
      else {
        await emit.reject({ id: single.id, reason: outcome.reason, detail: outcome.detail, record: single });
      }
    }
    return { embedded, model: embedder.model };
  } finally {
    cache.close();
    await embedder.close();
  }
}

/** Packs one group of queries (a language, or everything) and emits its dialogues. */
async function packGroup(
  ctx: PackContext,
  group: string,
  members: { single: Single; embedding: CachedEmbedding }[],
  model: string,
  emit: Emitter,
): Promise<PackResult & { reused: boolean; file: string }> {
  const { config } = ctx;
  const vectors = members.map((m) => m.embedding.vector);
  const file = path.join(
    ctx.workDir,
    `knn-${group.replace(/[^a-z0-9_+-]/gi, "_")}-${KnnIndex.fingerprint(model, members.map(queryHash), config.knn)}.bin`,
  );
  const index = await KnnIndex.build(vectors, config.knn, {
    file,
    signal: ctx.signal,
    log: ctx.log,
    onProgress: everyTenSeconds(
      ctx,
      (done, total) => `${group}: kNN index: ${done} of ${total} queries added`,
    ),
  });
  ctx.log.info(
    `${group}: ${members.length} queries, kNN index ${index.reused ? "read back from" : "saved to"} ${file}`,
  );
  const result = packSimilarQueries({
    count: members.length,
    neighboursOf: (i) =>
      index.neighbours(
        vectors[i]!,
        i,
        config.neighbours,
        (j) => members[j]!.single.query === members[i]!.single.query,
      ),
    joinSizes: config.join,
    seed: config.seed,
  });
  for (const g of result.groups) {
    const packedMembers = [g.seed, ...g.joined.map((n) => n.index)].map((i) => members[i]!);
    const packed = packedMembers.map((m) => m.single);
    const langs = new Map<string, number>();
    for (const s of packed) langs.set(s.lang, (langs.get(s.lang) ?? 0) + 1);
    const lang = [...langs].sort((a, b) => b[1] - a[1])[0]![0];
    await emit.out(
      makeDialogue({
        method: SINGLE_TURN_PACKING,
        sources: packed.map((s) => s.id),
        messages: packed.flatMap((s) => [
          { role: "user" as const, content: s.query },
          { role: "assistant" as const, content: s.answer },
        ]),
        lang,
        meta: {
          embedder: model,
          seed_query: members[g.seed]!.single.id,
          // the seed query's nearest neighbours: which joined, and which another dialogue had taken
          neighbours: g.neighbours.map((n, k) => ({
            id: members[n.index]!.single.id,
            distance: round6(n.distance),
            joined: g.joined.some((j) => j.index === n.index),
            used_before: g.usedBefore[k],
          })),
          // queries cut at the model's maximum length before embedding
          truncated: packedMembers.filter((m) => m.embedding.truncated).map((m) => m.single.id),
          knn: { M: config.knn.M, ef_construction: config.knn.ef_construction, ef: config.knn.ef },
          seed: config.seed,
        },
      }),
    );
  }
  return { ...result, reused: index.reused, file };
}

function queryHash(member: { single: Single }): Buffer {
  return createHash("sha256").update(member.single.query).digest();
}

function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}

/** Counted while packing (the run's state), for the summary. */
function newPackStats(ctx: PackContext): PackStats {
  return {
    input: 0,
    selected: 0,
    other_languages: {},
    groups: {},
    embedding: undefined,
    join: [...ctx.config.join],
  };
}

async function packSingleTurns(ctx: PackContext, emit: Emitter, stats: PackStats): Promise<void> {
  const { config } = ctx;
  const singles = await validateSingles(ctx.read("filter"), config, emit, stats);
  if (ctx.signal.aborted) return;
  // Nothing to embed (no input, or every record rejected): no model is loaded, so none need exist.
  const { embedded, model } =
    singles.length > 0 ? await embedQueries(ctx, singles, emit, stats) : { embedded: [], model: "" };
  const groups = new Map<string, typeof embedded>();
  for (const e of embedded) {
    const key = config.within_language ? e.single.lang : "all";
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key)!.push(e);
  }
  const indexFiles: string[] = [];
  for (const [group, members] of [...groups].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    if (ctx.signal.aborted) return;
    const result = await packGroup(ctx, group, members, model, emit);
    indexFiles.push(result.file);
    stats.groups[group] = {
      queries: members.length,
      dialogues: result.groups.length,
      packed: result.groups.reduce((n, g) => n + 1 + g.joined.length, 0),
      bypassed: result.bypassed,
      single: result.single,
      index: result.reused ? "reused" : "built",
    };
  }
  await mkdir(ctx.workDir, { recursive: true }); // no index was saved when there was nothing to pack
  await KnnIndex.prune(ctx.workDir, indexFiles);
}

export const packStage = defineStage<PackConfig, PackStats, PackSummary>({
  name: "pack",
  description:
    "packs similar single-turn queries into multi-turn dialogues (sentence embeddings, 4 nearest neighbours)",
  methods: [SINGLE_TURN_PACKING],
  upstream: ["filter"],
  // a dialogue method: `enabled: false` leaves it out, validate and export go on without it
  switchable: true,
  kind: "global",
  configSchema: packConfigSchema,
  open: newPackStats,
  run: packSingleTurns,
  summarize: summarizePack,
  summarySchema: packSummarySchema,
  report: {
    flow: outputsStep("pack dialogues"),
  },
});
