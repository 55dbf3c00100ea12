// Paper step 0: gather the open-source instruction datasets (and TACO for the LeetCode step) from the
// Hugging Face hub. One input record per configured source; each source's revision is resolved to a
// commit once, its files are listed at that commit and fetched resumably into the stage's work
// directory, each verified against the hub's listing. Outputs: one record per file.
import path from "node:path";
import { z } from "zod";
import { operational } from "../pipeline/hash.js";
import { HubClient } from "../pipeline/hub/client.js";
import type { PipelineRecord, RecordOutcome } from "../pipeline/record.js";
import { defineStage, type StageContext } from "../pipeline/stage.js";
import { fetchHubFiles } from "./sources/fetch.js";
import { ADAPTER_NAMES } from "./sources/index.js";
import { hubFilesSchema } from "./sources/spec.js";

export const sourceSchema = hubFilesSchema
  .extend({
    /** short name: the prefix of record ids (`magicoder:000123`) */
    name: z.string().regex(/^[a-z0-9][a-z0-9_-]*$/, "lowercase letters, digits, - and _"),
    /** how `normalize` reads its rows; `none` downloads only (TACO, read by the leetcode stage) */
    adapter: z.enum(ADAPTER_NAMES),
  })
  .strict();
export type SourceSpec = z.infer<typeof sourceSchema>;

/** The paper's four sources in the order of its data section, then TACO. Pin `revision` for reproducible runs. */
export const DEFAULT_SOURCES: SourceSpec[] = [
  {
    name: "magicoder",
    adapter: "magicoder",
    repo: "ise-uiuc/Magicoder-OSS-Instruct-75K",
    revision: "main",
    files: ["data-oss_instruct-decontaminated.jsonl"],
  },
  {
    name: "sharegpt",
    adapter: "sharegpt",
    repo: "ajibawa-2023/Python-Code-23k-ShareGPT",
    revision: "main",
    files: ["Python-Code-23k-ShareGPT.json"],
  },
  {
    name: "wizardcoder",
    adapter: "wizardcoder",
    repo: "ise-uiuc/Magicoder-Evol-Instruct-110K",
    revision: "main",
    files: ["data-evol_instruct-decontaminated.jsonl"],
  },
  {
    name: "evolinstruct",
    adapter: "evolinstruct",
    repo: "nickrosh/Evol-Instruct-Code-80k-v1",
    revision: "main",
    files: ["EvolInstruct-Code-80k.json"],
  },
  {
    // the Parquet conversion (config ALL); the repo's loading script and Arrow files are not read
    name: "taco",
    adapter: "none",
    repo: "BAAI/TACO",
    revision: "main",
    files: ["ALL/train-*.parquet", "ALL/test-*.parquet"],
  },
];

export const downloadConfigSchema = z
  .object({
    sources: z
      .array(sourceSchema)
      .min(1)
      .default(DEFAULT_SOURCES)
      .refine((list) => new Set(list.map((s) => s.name)).size === list.length, "source names must be unique"),
    /** sources fetched at the same time */
    concurrency: operational(z.number().int().min(1).max(16).default(2)),
  })
  .strict();
export type DownloadConfig = z.infer<typeof downloadConfigSchema>;

/** One output record of `download`: a verified file on disk. */
export interface DownloadedFileRecord extends PipelineRecord {
  /** `<repo>/<path>` */
  id: string;
  source: string;
  adapter: SourceSpec["adapter"];
  format?: SourceSpec["format"];
  repo: string;
  path: string;
  revision: string;
  /** the commit `revision` resolved to when the file was fetched */
  commit: string;
  size: number;
  sha256?: string;
  git_oid?: string;
  etag: string;
  /** relative to the data directory */
  local_path: string;
  /** position of the source in the config and of the file in the source, for a stable reading order */
  source_index: number;
  file_index: number;
}

/** Download's summary: each source's repository, revision, commit and files, and the bytes fetched. */
export const downloadSummarySchema = z.object({
  sources: z.record(
    z.string(),
    z.object({ repo: z.string(), revision: z.string(), commit: z.string(), files: z.number() }),
  ),
  bytes: z.number(),
});
export type DownloadSummary = z.infer<typeof downloadSummarySchema>;

export const downloadStage = defineStage<DownloadConfig, unknown, DownloadSummary>({
  name: "download",
  description: "fetch the source datasets from the hub (resumable, verified, never twice)",
  upstream: [],
  kind: "record",
  configSchema: downloadConfigSchema,
  concurrency: (ctx) => ctx.config.concurrency,
  async *input(ctx) {
    for (const [index, source] of ctx.config.sources.entries()) {
      yield { id: source.name, source_index: index, spec: source };
    }
  },
  inputSize: async (ctx) => ctx.config.sources.length,
  async process(record, ctx) {
    return downloadSource(record.spec as SourceSpec, record.source_index as number, ctx);
  },
  async summarize(ctx) {
    // in config order, so the manifest reads like the config it would pin
    const files: DownloadedFileRecord[] = [];
    for await (const r of ctx.read("download")) files.push(r as DownloadedFileRecord);
    files.sort((a, b) => a.source_index - b.source_index || a.file_index - b.file_index);
    const sources: Record<string, { repo: string; revision: string; commit: string; files: number }> = {};
    let bytes = 0;
    for (const file of files) {
      sources[file.source] ??= { repo: file.repo, revision: file.revision, commit: file.commit, files: 0 };
      sources[file.source]!.files++;
      bytes += file.size;
    }
    return { sources, bytes };
  },
  summarySchema: downloadSummarySchema,
});

async function downloadSource(
  source: SourceSpec,
  sourceIndex: number,
  ctx: StageContext<DownloadConfig>,
): Promise<RecordOutcome> {
  const client = new HubClient(ctx.root.hub, { signal: ctx.signal, log: ctx.log });
  const fetched = await fetchHubFiles(client, source, ctx.workDir, { signal: ctx.signal, log: ctx.log });
  if (fetched === "interrupted") {
    return { failed: { reason: "interrupted", detail: "partial download kept; rerun to continue it" } };
  }
  const out: DownloadedFileRecord[] = fetched.files.map((file, fileIndex) => ({
    id: `${source.repo}/${file.path}`,
    source: source.name,
    adapter: source.adapter,
    ...(source.format ? { format: source.format } : {}),
    repo: source.repo,
    path: file.path,
    revision: source.revision,
    commit: fetched.commit,
    size: file.size,
    ...(file.sha256 ? { sha256: file.sha256 } : {}),
    ...(file.gitOid ? { git_oid: file.gitOid } : {}),
    etag: file.etag,
    local_path: path.relative(ctx.dataDir, file.localPath),
    source_index: sourceIndex,
    file_index: fileIndex,
  }));
  return { out };
}
