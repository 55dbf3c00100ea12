// Paper step 1: the four instruction datasets become one pool of `{id, query, answer, resource, lang}`
// (CodeFeedback-Filtered-Instruction's shape). The input is every raw row of every downloaded file,
// streamed in a fixed order (sources as configured, files as listed, rows as stored), so resume by
// position is exact; each row goes through its source's adapter, and a bad row becomes a reject.
import { stat } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { UserError } from "../pipeline/errors.js";
import { type RawRow, readRows } from "../pipeline/readers/index.js";
import type { PipelineRecord, RecordOutcome } from "../pipeline/record.js";
import { outputsStep } from "../pipeline/report/flow.js";
import { defineStage, type StageContext } from "../pipeline/stage.js";
import type { DownloadedFileRecord } from "./download.js";
import { ADAPTERS, type AdapterName } from "./sources/index.js";
import { seedLanguage } from "./sources/language.js";

export const normalizeConfigSchema = z
  .object({
    /** a raw row longer than this many bytes is rejected (`row-too-large`) without being held in memory */
    max_row_bytes: z.number().int().positive().default(1_048_576),
    /** names of the sources to normalize; by default every downloaded source that has an adapter */
    sources: z.array(z.string().min(1)).optional(),
  })
  .strict();
export type NormalizeConfig = z.infer<typeof normalizeConfigSchema>;

/** The seed pair: one single-turn code instruction and its answer. */
export interface SeedRecord extends PipelineRecord {
  /** `<source>:<row>` with the row counted across the source's files, e.g. `magicoder:000123` */
  id: string;
  query: string;
  answer: string;
  /** magicoder | wizardcoder | evolinstruct | sharegpt */
  resource: string;
  /** canonical language name, or `unknown` */
  lang: string;
  /** where the pair came from: the dataset, file, row in that file, and the row's own id if it has one */
  origin: { repo: string; file: string; row: number; commit: string; row_id?: string };
}

/** An input record of `normalize`: a raw row and where it sits. */
interface RawRowRecord extends PipelineRecord {
  adapter: AdapterName;
  repo: string;
  file: string;
  commit: string;
  row: RawRow;
}

/** Record ids number rows with at least six digits, so they sort like the rows. */
export function seedId(source: string, row: number): string {
  return `${source}:${String(row).padStart(6, "0")}`;
}

/** The downloaded files to normalize, in reading order. */
async function filesToRead(ctx: StageContext<NormalizeConfig>): Promise<DownloadedFileRecord[]> {
  const files: DownloadedFileRecord[] = [];
  for await (const record of ctx.read("download")) {
    const file = record as DownloadedFileRecord;
    if (file.adapter === "none") continue;
    if (ctx.config.sources && !ctx.config.sources.includes(file.source)) continue;
    files.push(file);
  }
  return files.sort((a, b) => a.source_index - b.source_index || a.file_index - b.file_index);
}

/**
 * Resume counts rows by position, so a file that changed since download verified it would shift every
 * row after the change; a missing or resized file stops the run instead of mixing two versions.
 */
async function checkStillThere(local: string, file: DownloadedFileRecord): Promise<void> {
  const size = (await stat(local).catch(() => undefined))?.size;
  if (size === file.size) return;
  throw new UserError(
    `${local} (${file.path} of dataset ${file.repo}) ${size === undefined ? "is missing" : `is ${size} bytes, not the ${file.size} download verified`}; ` +
      "run `pnpm pipeline run download --force` to fetch it again, then rerun",
  );
}

async function* rawRows(ctx: StageContext<NormalizeConfig>): AsyncGenerator<RawRowRecord> {
  const files = await filesToRead(ctx);
  const rowsSoFar = new Map<string, number>();
  for (const file of files) {
    let n = rowsSoFar.get(file.source) ?? 0;
    if (ctx.limit !== undefined && n >= ctx.limit) continue;
    const local = path.resolve(ctx.dataDir, file.local_path);
    await checkStillThere(local, file);
    for await (const row of readRows(local, { maxRowBytes: ctx.config.max_row_bytes, format: file.format })) {
      yield {
        id: seedId(file.source, n),
        adapter: file.adapter as AdapterName,
        repo: file.repo,
        file: file.path,
        commit: file.commit,
        row,
      };
      n++;
      if (ctx.limit !== undefined && n >= ctx.limit) break;
    }
    rowsSoFar.set(file.source, n);
  }
}

/** One raw row to a seed pair or a reject; exported for tests and the benchmark. */
export function normalizeRow(input: RawRowRecord): RecordOutcome {
  const { row } = input;
  if (row.error) {
    return {
      rejects: [
        { id: input.id, reason: row.error.reason, detail: row.error.detail, record: row.error.prefix },
      ],
    };
  }
  const adapter = ADAPTERS[input.adapter];
  const adapted = adapter.adapt(row.value, row.index);
  if ("reject" in adapted) {
    return {
      rejects: [
        { id: input.id, reason: adapted.reject, detail: adapted.detail, record: truncated(row.value) },
      ],
    };
  }
  const origin: SeedRecord["origin"] = {
    repo: input.repo,
    file: input.file,
    row: row.index,
    commit: input.commit,
  };
  if (adapted.rowId !== undefined) origin.row_id = adapted.rowId;
  const seed: SeedRecord = {
    id: input.id,
    query: adapted.query,
    answer: adapted.answer,
    resource: adapter.resource,
    lang: seedLanguage(adapted.answer, adapted.declaredLang),
    origin,
  };
  return { out: [seed] };
}

/** A rejected row as kept for inspection: whole when small, else its JSON's first 2,000 characters. */
function truncated(value: unknown): unknown {
  const text = JSON.stringify(value) ?? String(value);
  return text.length <= 2000 ? value : `${text.slice(0, 2000)}...`;
}

/** Normalize's summary: how many seed pairs each resource and each language has. */
export const normalizeSummarySchema = z.object({
  by_resource: z.record(z.string(), z.number()),
  by_lang: z.record(z.string(), z.number()),
});
export type NormalizeSummary = z.infer<typeof normalizeSummarySchema>;

export const normalizeStage = defineStage<NormalizeConfig, unknown, NormalizeSummary>({
  name: "normalize",
  description: "one adapter per source: {id, query, answer, resource, lang}; bad rows rejected with a reason",
  upstream: ["download"],
  kind: "record",
  configSchema: normalizeConfigSchema,
  // reading `--limit N` rows per source changes the output, so it is part of the configuration
  fingerprint: ({ limit }) => ({ limit: limit ?? null }),
  // one at a time: adapters are synchronous, and a single lane keeps outputs in input order, which is
  // the order dedup's "first copy survives" rule refers to
  concurrency: () => 1,
  input: (ctx) => rawRows(ctx),
  process: async (record) => normalizeRow(record as RawRowRecord),
  async summarize(ctx) {
    const summary: NormalizeSummary = { by_resource: {}, by_lang: {} };
    for await (const seed of ctx.read("normalize")) {
      const { resource, lang } = seed as SeedRecord;
      summary.by_resource[resource] = (summary.by_resource[resource] ?? 0) + 1;
      summary.by_lang[lang] = (summary.by_lang[lang] ?? 0) + 1;
    }
    return summary;
  },
  summarySchema: normalizeSummarySchema,
  report: { flow: outputsStep("seed pool (normalize)") },
});
