// Not a step of the paper (it had none): before spending LLM calls on complexity scores, drop queries
// that are benchmark prompts in disguise, then exact duplicates (same normalized query text), then
// near duplicates (MinHash + LSH over word shingles of the query). The first copy in normalize's order
// (sources in config order, rows in file order) survives; every drop is a reject naming the survivor
// or the benchmark item it matched.
import path from "node:path";
import { z } from "zod";
import { type ContaminationHit, NgramIndex } from "../pipeline/dedup/decontaminate.js";
import { Deduplicator } from "../pipeline/dedup/deduplicator.js";
import { wordHashes } from "../pipeline/dedup/text.js";
import { InterruptedError } from "../pipeline/errors.js";
import { HubClient } from "../pipeline/hub/client.js";
import { readRows } from "../pipeline/readers/index.js";
import type { PipelineRecord } from "../pipeline/record.js";
import { outputsStep } from "../pipeline/report/flow.js";
import { defineStage, type Emitter, type StageContext } from "../pipeline/stage.js";
import { fetchHubFiles } from "./sources/fetch.js";
import { hubFilesSchema } from "./sources/spec.js";

export const benchmarkSchema = hubFilesSchema
  .extend({
    /** short name used in reject reasons, e.g. `humaneval` */
    name: z.string().regex(/^[a-z0-9][a-z0-9_+-]*$/, "lowercase letters, digits, -, + and _"),
    /** the column holding the prompt text */
    text_field: z.string().min(1),
    /** the column holding the item's id (e.g. `task_id`) */
    id_field: z.string().min(1),
  })
  .strict();
export type BenchmarkSpec = z.infer<typeof benchmarkSchema>;

/** The two benchmarks the paper evaluates on (their "+" versions share the prompts). */
export const DEFAULT_BENCHMARKS: BenchmarkSpec[] = [
  {
    name: "humaneval",
    repo: "openai/openai_humaneval",
    revision: "main",
    files: ["openai_humaneval/test-*.parquet"],
    text_field: "prompt",
    id_field: "task_id",
  },
  {
    name: "mbpp",
    repo: "google-research-datasets/mbpp",
    revision: "main",
    files: ["full/test-*.parquet"],
    text_field: "text",
    id_field: "task_id",
  },
];

export const dedupConfigSchema = z
  .object({
    /** off: every record passes through unchanged */
    enabled: z.boolean().default(true),
    /** drop queries equal after NFKC, lowercasing and whitespace collapsing */
    exact: z.boolean().default(true),
    /** drop near-duplicate queries (MinHash + LSH) */
    near: z.boolean().default(true),
    /** estimated Jaccard similarity of word shingles at or above which two queries are near duplicates */
    jaccard_threshold: z.number().gt(0).max(1).default(0.8),
    /** MinHash signature length */
    num_perm: z.number().int().min(16).max(1024).default(128),
    /** words per shingle */
    shingle_words: z.number().int().min(1).max(32).default(5),
    /** drop queries that overlap a benchmark prompt */
    decontaminate: z.boolean().default(true),
    /** words per n-gram for decontamination */
    ngram_words: z.number().int().min(3).max(64).default(10),
    /** share of the shorter text's n-grams found in the other, at or above which a query is contaminated */
    overlap_threshold: z.number().gt(0).max(1).default(0.5),
    /** benchmark prompt sets, fetched from the hub like the sources */
    benchmarks: z.array(benchmarkSchema).default(DEFAULT_BENCHMARKS),
  })
  .strict();
export type DedupConfig = z.infer<typeof dedupConfigSchema>;

const REJECT_CONTAMINATED = "benchmark-contamination";

/** Fetches the benchmark sets and indexes their prompts' n-grams. */
export async function loadBenchmarks(ctx: StageContext<DedupConfig>): Promise<NgramIndex> {
  const index = new NgramIndex(ctx.config.ngram_words);
  const client = new HubClient(ctx.root.hub, { signal: ctx.signal, log: ctx.log });
  for (const spec of ctx.config.benchmarks) {
    const fetched = await fetchHubFiles(client, spec, path.join(ctx.workDir, "benchmarks"), {
      signal: ctx.signal,
      log: ctx.log,
    });
    if (fetched === "interrupted")
      throw new InterruptedError("interrupted while fetching benchmark sets; rerun to continue");
    let added = 0;
    let unusable = 0;
    for (const file of fetched.files) {
      for await (const row of readRows(file.localPath, { maxRowBytes: 16 << 20, format: spec.format })) {
        const value = row.value as Record<string, unknown> | undefined;
        const text = value?.[spec.text_field];
        const id = value?.[spec.id_field];
        if (typeof text !== "string" || (typeof id !== "string" && typeof id !== "number")) {
          unusable++;
          continue;
        }
        if (index.add({ benchmark: spec.name, id: String(id), text })) added++;
      }
    }
    if (added === 0) {
      ctx.log.warn(
        `benchmark ${spec.name}: no usable prompt in ${spec.repo} (check text_field "${spec.text_field}" and id_field "${spec.id_field}")`,
      );
    } else {
      ctx.log.info(
        `benchmark ${spec.name}: ${added} prompts indexed${unusable ? `, ${unusable} rows without them` : ""}`,
      );
    }
  }
  return index;
}

function contaminationDetail(hit: ContaminationHit, n: number): string {
  return `overlaps ${hit.item.benchmark} item ${hit.item.id}: ${Math.round(hit.overlap * 100)}% of the shorter text's ${n}-word n-grams (${hit.shared} shared)`;
}

/** The whole decision pass; exported for tests and the benchmark. */
export async function deduplicateSeeds(
  records: AsyncIterable<PipelineRecord>,
  config: DedupConfig,
  benchmarks: NgramIndex | undefined,
  emit: Emitter,
  signal?: AbortSignal,
): Promise<void> {
  const dedup = new Deduplicator({
    exact: config.exact,
    near: config.near,
    threshold: config.jaccard_threshold,
    numPerm: config.num_perm,
    shingleWords: config.shingle_words,
  });
  for await (const record of records) {
    if (signal?.aborted) throw new Error("interrupted");
    const query = typeof record.query === "string" ? record.query : "";
    const words = wordHashes(query);
    const hit = benchmarks?.matchWords(words, config.overlap_threshold);
    if (hit) {
      await emit.reject({
        id: record.id,
        reason: REJECT_CONTAMINATED,
        detail: contaminationDetail(hit, config.ngram_words),
        record: { ...record, contaminated_by: `${hit.item.benchmark}/${hit.item.id}` },
      });
      continue;
    }
    const verdict = dedup.check(record.id, query, words);
    if (verdict.kind === "unique") {
      await emit.out(record);
      continue;
    }
    const like =
      verdict.kind === "near-duplicate"
        ? `estimated Jaccard ${verdict.similarity.toFixed(2)} with`
        : "same query as";
    // the verdict's kind is the reason: exact-duplicate, near-duplicate
    await emit.reject({
      id: record.id,
      reason: verdict.kind,
      detail: `${like} ${verdict.of}, which is kept`,
      record: { ...record, duplicate_of: verdict.of },
    });
  }
}

/** Dedup's summary: the records it dropped, by reason. */
export const dedupSummarySchema = z.object({ dropped: z.record(z.string(), z.number()) });
export type DedupSummary = z.infer<typeof dedupSummarySchema>;

export const dedupStage = defineStage<DedupConfig, unknown, DedupSummary>({
  name: "dedup",
  description: "drop benchmark-contaminated, exact-duplicate and near-duplicate queries (not in the paper)",
  upstream: ["normalize"],
  kind: "global",
  configSchema: dedupConfigSchema,
  async run(ctx, emit) {
    const records = ctx.read("normalize");
    if (!ctx.config.enabled) {
      for await (const record of records) await emit.out(record);
      return;
    }
    const useBenchmarks = ctx.config.decontaminate && ctx.config.benchmarks.length > 0;
    const benchmarks = useBenchmarks ? await loadBenchmarks(ctx) : undefined;
    await deduplicateSeeds(records, ctx.config, benchmarks, emit, ctx.signal);
  },
  // the runner counted the rejects by reason as they were emitted
  summarize: async (_ctx, _state, { rejectReasons }) => ({ dropped: { ...rejectReasons } }),
  summarySchema: dedupSummarySchema,
  report: { flow: outputsStep("after dedup") },
});
