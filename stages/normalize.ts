// Paper step 1: the instruction datasets become one pool of `{id, query, answer, resource, lang}`
// (CodeFeedback-Filtered-Instruction's shape). The input is every raw row of every downloaded file,
// streamed in a fixed order (sources as configured, files as listed, rows as stored), so resume by
// position is exact; each row is read by its source's `columns` or `chat` mapping, a bad one rejected.
import { stat } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { UserError } from "../pipeline/errors.js";
import { type RawRow, readRows } from "../pipeline/readers/index.js";
import type { PipelineRecord, RecordOutcome } from "../pipeline/record.js";
import { outputsStep } from "../pipeline/report/flow.js";
import { table } from "../pipeline/report/html.js";
import { escapeXml } from "../pipeline/report/svg.js";
import { defineStage, type StageContext } from "../pipeline/stage.js";
import { type DownloadedFileRecord, downloadStage, sourceLines } from "./download.js";
import { adaptChat, adaptColumns } from "./sources/adapter.js";
import { type ChatKeys, detectChatKeys } from "./sources/chat.js";
import { seedLanguage } from "./sources/language.js";
import { type ChatMapping, type ColumnMapping, mappingOf, resourceOf } from "./sources/source.js";

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
  /**
   * `<source>:<row>` with the row counted across the source's files, e.g. `magicoder:000123`; a chat
   * source with `turns: each` adds the pair, from 1: `mychat:000004.2`
   */
  id: string;
  query: string;
  answer: string;
  /** the source's name: magicoder | wizardcoder | evolinstruct | sharegpt for the paper's */
  resource: string;
  /** canonical language name, or `unknown` */
  lang: string;
  /**
   * where the pair came from: the hub dataset and commit (a local file: its sha256), the file, the row
   * in that file, the row's own id if it has one, and the pair of a dialogue
   */
  origin: {
    repo?: string;
    file: string;
    row: number;
    commit?: string;
    sha256?: string;
    row_id?: string;
    pair?: number;
  };
}

/** An input record of `normalize`: a raw row, where it sits, and how its source is read. */
export interface RawRowRecord extends PipelineRecord {
  source: string;
  resource: string;
  mapping: { columns: ColumnMapping } | { chat: ChatMapping };
  /** a chat source's keys, as its first row showed them */
  chatKeys?: ChatKeys | undefined;
  repo?: string | undefined;
  file: string;
  commit?: string | undefined;
  sha256?: string | undefined;
  row: RawRow;
}

/** Record ids number rows with at least six digits, so they sort like the rows. */
function seedId(source: string, row: number): string {
  return `${source}:${String(row).padStart(6, "0")}`;
}

/**
 * Resume counts rows by position, so a file that changed since download verified it would shift every
 * row after the change; a missing or resized file stops the run instead of mixing two versions.
 */
export async function checkStillThere(local: string, file: DownloadedFileRecord): Promise<void> {
  const size = (await stat(local).catch(() => undefined))?.size;
  if (size === file.size) return;
  if (file.repo === undefined) {
    throw new UserError(
      `${file.path} (source ${file.source}) ${size === undefined ? "is missing" : `is ${size} bytes, not the ${file.size} download fingerprinted`}; ` +
        "run `pnpm pipeline run download` to fingerprint it again (the stages after it start over), then rerun",
    );
  }
  throw new UserError(
    `${local} (${file.path} of dataset ${file.repo}) ${size === undefined ? "is missing" : `is ${size} bytes, not the ${file.size} download verified`}; ` +
      "run `pnpm pipeline run download --force` to fetch it again, then rerun",
  );
}

/**
 * The raw rows of the downloaded files `take` accepts, in reading order (sources as configured, files
 * as listed, rows as stored), each with its id `<source>:<row>`, the row counted across the source's
 * files; at most `--limit` rows per source. Normalize and audit read their inputs so.
 */
export async function* downloadedRows(
  ctx: StageContext<{ max_row_bytes: number }>,
  take: (file: DownloadedFileRecord) => boolean,
): AsyncGenerator<{ id: string; file: DownloadedFileRecord; row: RawRow }> {
  const files: DownloadedFileRecord[] = [];
  for await (const record of ctx.read("download")) {
    if (take(record as DownloadedFileRecord)) files.push(record as DownloadedFileRecord);
  }
  files.sort((a, b) => a.source_index - b.source_index || a.file_index - b.file_index);
  const rowsSoFar = new Map<string, number>();
  for (const file of files) {
    let n = rowsSoFar.get(file.source) ?? 0;
    if (ctx.limit !== undefined && n >= ctx.limit) continue;
    const local = path.resolve(ctx.dataDir, file.local_path);
    await checkStillThere(local, file);
    for await (const row of readRows(local, { maxRowBytes: ctx.config.max_row_bytes, format: file.format })) {
      yield { id: seedId(file.source, n), file, row };
      n++;
      if (ctx.limit !== undefined && n >= ctx.limit) break;
    }
    rowsSoFar.set(file.source, n);
  }
}

async function* rawRows(ctx: StageContext<NormalizeConfig>): AsyncGenerator<RawRowRecord> {
  const { sources } = ctx.config;
  const take = (file: DownloadedFileRecord) =>
    mappingOf(file) !== undefined && (!sources || sources.includes(file.source));
  const keysOf = new Map<string, ChatKeys>();
  for await (const { id, file, row } of downloadedRows(ctx, take)) {
    const mapping = mappingOf(file)!;
    if ("chat" in mapping && !keysOf.has(file.source)) {
      const keys = detectChatKeys(row.value, mapping.chat);
      if (keys) keysOf.set(file.source, keys);
    }
    yield {
      id,
      source: file.source,
      resource: resourceOf(file),
      mapping,
      chatKeys: keysOf.get(file.source),
      repo: file.repo,
      file: file.path,
      commit: file.commit,
      sha256: file.repo === undefined ? file.sha256 : undefined,
      row,
    };
  }
}

/** One raw row to its seed pairs or rejects; exported for tests and the benchmark. */
export function normalizeRow(input: RawRowRecord): RecordOutcome {
  const { row } = input;
  const where = `${input.source}, ${input.file}: `;
  if (row.error) {
    const { reason, detail, prefix } = row.error;
    return { rejects: [{ id: input.id, reason, detail: where + detail, record: prefix }] };
  }
  const adapted =
    "columns" in input.mapping
      ? adaptColumns(row.value, row.index, input.mapping.columns)
      : adaptChat(row.value, row.index, input.mapping.chat, input.chatKeys);
  const idOf = (pair: number | undefined) => (pair === undefined ? input.id : `${input.id}.${pair}`);
  const rejects = adapted.rejects.map((r) => ({
    id: idOf(r.pair),
    reason: r.reject,
    detail: where + r.detail,
    record: truncated(row.value),
  }));
  const out = adapted.pairs.map((pair): SeedRecord => {
    const origin: SeedRecord["origin"] =
      input.repo !== undefined
        ? { repo: input.repo, file: input.file, row: row.index, commit: input.commit! }
        : { file: input.file, row: row.index, sha256: input.sha256! };
    if (pair.rowId !== undefined) origin.row_id = pair.rowId;
    if (pair.pair !== undefined) origin.pair = pair.pair;
    return {
      id: idOf(pair.pair),
      query: pair.query,
      answer: pair.answer,
      resource: input.resource,
      lang: seedLanguage(pair.answer, pair.declaredLang),
      origin,
    };
  });
  return { ...(out.length > 0 ? { out } : {}), ...(rejects.length > 0 ? { rejects } : {}) };
}

/** A rejected row as kept for inspection: whole when small, else its JSON's first 2,000 characters. */
function truncated(value: unknown): unknown {
  const text = JSON.stringify(value) ?? String(value);
  return text.length <= 2000 ? value : `${text.slice(0, 2000)}...`;
}

/** Normalize's summary: how many seed pairs each resource and each language has, and the rejects by reason. */
export const normalizeSummarySchema = z.object({
  by_resource: z.record(z.string(), z.number()),
  by_lang: z.record(z.string(), z.number()),
  rejected: z.record(z.string(), z.number()).optional(),
});
export type NormalizeSummary = z.infer<typeof normalizeSummarySchema>;

export const normalizeStage = defineStage<NormalizeConfig, unknown, NormalizeSummary>({
  name: "normalize",
  description: "each source's mapping: {id, query, answer, resource, lang}; bad rows rejected with a reason",
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
  async summarize(ctx, _state, { rejectReasons }) {
    const summary: NormalizeSummary = { by_resource: {}, by_lang: {}, rejected: { ...rejectReasons } };
    for await (const seed of ctx.read("normalize")) {
      const { resource, lang } = seed as SeedRecord;
      summary.by_resource[resource] = (summary.by_resource[resource] ?? 0) + 1;
      summary.by_lang[lang] = (summary.by_lang[lang] ?? 0) + 1;
    }
    return summary;
  },
  summarySchema: normalizeSummarySchema,
  report: {
    flow: outputsStep("seed pool (normalize)"),
    sections: [
      {
        id: "sources",
        reads: [downloadStage],
        render(view) {
          const download = view.summaryOf(downloadStage);
          if (!download) return "";
          const lines = sourceLines(download, view.summary?.by_resource);
          const rejected = Object.entries(view.summary?.rejected ?? {})
            .sort(([a], [b]) => (a < b ? -1 : 1))
            .map(([reason, count]) => `${reason} ${count}`)
            .join(", ");
          return `<section id="sources"><h2>Sources</h2>${table(
            ["source", "dataset or path", "revision or fingerprint", "adapter", "files", "seed pairs"],
            lines.map((l) => [l.name, l.where, l.version, l.adapter, l.files, l.rows ?? ""]),
            4,
          )}${rejected ? `<p class="meta">Rows rejected by reason: ${escapeXml(rejected)}.</p>` : ""}</section>`;
        },
      },
    ],
  },
});
