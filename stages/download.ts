// Paper step 0: gather the instruction datasets (and TACO for the LeetCode step). One input record per
// configured source. A hub source's revision is resolved to a commit once, its files listed at that
// commit and fetched resumably into the work directory, each verified against the listing; a local
// source (`path:`) is read where it lies, each file fingerprinted (size, sha256). One record per file.
import { createHash } from "node:crypto";
import { statSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { UserError } from "../pipeline/errors.js";
import { operational } from "../pipeline/hash.js";
import { HubClient } from "../pipeline/hub/client.js";
import { describeLocalFile, matchLocalPath } from "../pipeline/hub/local-files.js";
import { formatOfName } from "../pipeline/readers/index.js";
import type { PipelineRecord, RecordOutcome } from "../pipeline/record.js";
import { defineStage, type StageContext } from "../pipeline/stage.js";
import { fetchHubFiles } from "./sources/fetch.js";
import { PAPER_MAPPINGS, type SourceSpec, sourceSchema } from "./sources/source.js";

/** A paper source: its adapter's mapping, and its one file at the head of `repo`. */
const paper = (name: string, repo: string, file: string): SourceSpec => ({
  name,
  ...PAPER_MAPPINGS[name]!,
  repo,
  revision: "main",
  files: [file],
});

/** The paper's four sources in the order of its data section, then TACO. Pin `revision` for reproducible runs. */
export const DEFAULT_SOURCES: SourceSpec[] = [
  paper("magicoder", "ise-uiuc/Magicoder-OSS-Instruct-75K", "data-oss_instruct-decontaminated.jsonl"),
  paper("sharegpt", "ajibawa-2023/Python-Code-23k-ShareGPT", "Python-Code-23k-ShareGPT.json"),
  paper("wizardcoder", "ise-uiuc/Magicoder-Evol-Instruct-110K", "data-evol_instruct-decontaminated.jsonl"),
  paper("evolinstruct", "nickrosh/Evol-Instruct-Code-80k-v1", "EvolInstruct-Code-80k.json"),
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

/** One output record of `download`: a verified hub file, or a fingerprinted local one. */
export interface DownloadedFileRecord extends PipelineRecord {
  /** `<repo>/<path>`, or a local file's absolute path */
  id: string;
  source: string;
  adapter: SourceSpec["adapter"];
  resource?: string;
  format?: SourceSpec["format"];
  columns?: SourceSpec["columns"];
  chat?: SourceSpec["chat"];
  /** a hub file's dataset; absent for a local file */
  repo?: string;
  /** in the dataset, or a local file's path (relative to the working directory when under it) */
  path: string;
  /** a local file's source `path` as configured (a file, a directory or a glob) */
  source_path?: string;
  revision?: string;
  /** the commit `revision` resolved to when the file was fetched */
  commit?: string;
  size: number;
  sha256?: string;
  git_oid?: string;
  etag?: string;
  /** relative to the data directory (a local file: absolute) */
  local_path: string;
  /** a local file's modification time when it was fingerprinted */
  mtime_ms?: number;
  /** position of the source in the config and of the file in the source, for a stable reading order */
  source_index: number;
  file_index: number;
}

/** A hub source's dataset, revision and commit, or a local source's path and the fingerprint of its files. */
const sourceSummarySchema = z.object({
  repo: z.string().optional(),
  revision: z.string().optional(),
  commit: z.string().optional(),
  path: z.string().optional(),
  /** sha256 of the files' paths, sizes and sha256s, one line each */
  fingerprint: z.string().optional(),
  adapter: z.string().optional(),
  /** the records' `resource`, where it is not the source's name */
  resource: z.string().optional(),
  files: z.number(),
  /** a local source's files as download saw them: absolute path -> [size, modification time] */
  seen: z.record(z.string(), z.tuple([z.number(), z.number()])).optional(),
});
export type SourceSummary = z.infer<typeof sourceSummarySchema>;

/** Download's summary: each source's repository, revision, commit and files, and the bytes fetched. */
export const downloadSummarySchema = z.object({
  sources: z.record(z.string(), sourceSummarySchema),
  bytes: z.number(),
});
export type DownloadSummary = z.infer<typeof downloadSummarySchema>;

/**
 * Each source as `status` and the report show it: where it is (hub `owner/name`, or the path as
 * configured), which version (`revision @ commit`, or `sha256 <fingerprint>`, 12 digits), its adapter,
 * its files, and the seed pairs normalize made of it (undefined: not normalized, or not yet).
 */
export function sourceLines(download: DownloadSummary, seedPairs?: Record<string, number>) {
  return Object.entries(download.sources).map(([name, s]) => ({
    name,
    where: s.repo ?? s.path ?? "",
    version: s.repo
      ? `${s.revision ?? ""} @ ${(s.commit ?? "").slice(0, 12)}`
      : `sha256 ${(s.fingerprint ?? "").slice(0, 12)}`,
    adapter: s.adapter ?? "",
    files: s.files,
    rows: s.adapter === "columns" || s.adapter === "chat" ? seedPairs?.[s.resource ?? name] : undefined,
  }));
}

/** The fingerprint of a local source's files, from download's records of them. */
export function filesFingerprint(files: readonly DownloadedFileRecord[]): string {
  const lines = files.map((f) => `${f.path}\t${f.size}\t${f.sha256 ?? ""}\n`);
  return createHash("sha256").update(lines.join("")).digest("hex");
}

/**
 * What a local source's files look like now (size, modification time): a file that changed since
 * download fingerprinted it makes the stage stale, so its rows are never mixed with the old ones.
 */
function localFilesNow(sources: readonly SourceSpec[]): unknown {
  const seen: Record<string, Array<[string, number, number]>> = {};
  for (const source of sources) {
    if (source.path === undefined) continue;
    seen[source.name] = matchLocalPath(source.path, acceptsName(source)).map((file) => {
      const info = statSync(file, { throwIfNoEntry: false });
      return [file, info?.size ?? -1, info?.mtimeMs ?? -1];
    });
  }
  return Object.keys(seen).length > 0 ? { local_files: seen } : undefined;
}

/** A local file as records and messages show it: relative to the working directory when under it. */
function shownPath(absolute: string): string {
  const relative = path.relative(process.cwd(), absolute);
  return relative.startsWith("..") || path.isAbsolute(relative) ? absolute : relative;
}

/** The first local source file that is new, gone or changed since download's last run saw it. */
function localFileChanged(sources: readonly SourceSpec[], summary: unknown): string | undefined {
  const last = downloadSummarySchema.safeParse(summary);
  if (!last.success) return undefined;
  for (const source of sources) {
    const seen = last.data.sources[source.name]?.seen;
    if (source.path === undefined || !seen) continue;
    const now = matchLocalPath(source.path, acceptsName(source));
    for (const file of now) {
      const info = statSync(file, { throwIfNoEntry: false });
      const was = seen[file];
      const what = !was
        ? "new source file"
        : !info || info.size !== was[0] || info.mtimeMs !== was[1]
          ? "source file changed"
          : undefined;
      // the path first: status's table shows a reason's first 60 characters
      if (what) return `${what}: ${shownPath(file)} (source ${source.name}); a run reads it again`;
    }
    const gone = Object.keys(seen).find((file) => !now.includes(file));
    if (gone) return `source file gone: ${shownPath(gone)} (source ${source.name}); a run reads without it`;
  }
  return undefined;
}

/** A directory or glob takes the files whose names say a format we read, or any with `format:` set. */
function acceptsName(source: SourceSpec): (name: string) => boolean {
  return source.format ? () => true : (name) => formatOfName(name) !== undefined;
}

export const downloadStage = defineStage<DownloadConfig, unknown, DownloadSummary>({
  name: "download",
  description:
    "fetch the source datasets from the hub (resumable, verified, never twice), fingerprint local ones",
  upstream: [],
  kind: "record",
  configSchema: downloadConfigSchema,
  fingerprint: ({ config }) => localFilesNow(config.sources),
  inputChanged: ({ config, summary }) => localFileChanged(config.sources, summary),
  concurrency: (ctx) => ctx.config.concurrency,
  async *input(ctx) {
    for (const [index, source] of ctx.config.sources.entries()) {
      yield { id: source.name, source_index: index, spec: source };
    }
  },
  inputSize: async (ctx) => ctx.config.sources.length,
  async process(record, ctx) {
    const spec = record.spec as SourceSpec;
    const index = record.source_index as number;
    return spec.path === undefined ? fetchSource(spec, index, ctx) : fingerprintLocal(spec, index, ctx);
  },
  async summarize(ctx) {
    // in config order, so the manifest reads like the config it would pin
    const files: DownloadedFileRecord[] = [];
    for await (const r of ctx.read("download")) files.push(r as DownloadedFileRecord);
    files.sort((a, b) => a.source_index - b.source_index || a.file_index - b.file_index);
    const sources: Record<string, SourceSummary> = {};
    let bytes = 0;
    for (const file of files) {
      const reading = {
        adapter: file.adapter,
        ...(file.resource ? { resource: file.resource } : {}),
        files: 0,
      };
      if (file.repo !== undefined) {
        const { repo, revision = "", commit = "" } = file;
        sources[file.source] ??= { repo, revision, commit, ...reading };
      } else {
        const given = ctx.config.sources.find((s) => s.name === file.source)?.path ?? file.path;
        sources[file.source] ??= { path: given, ...reading };
        sources[file.source]!.seen ??= {};
        sources[file.source]!.seen![file.local_path] = [file.size, file.mtime_ms ?? -1];
      }
      sources[file.source]!.files++;
      bytes += file.size;
    }
    for (const [name, s] of Object.entries(sources)) {
      if (s.path !== undefined) s.fingerprint = filesFingerprint(files.filter((f) => f.source === name));
    }
    return { sources, bytes };
  },
  summarySchema: downloadSummarySchema,
});

/** The fields every file record of `source` carries: how normalize reads it. */
function readingOf(source: SourceSpec) {
  return {
    source: source.name,
    adapter: source.adapter,
    ...(source.resource ? { resource: source.resource } : {}),
    ...(source.format ? { format: source.format } : {}),
    ...(source.columns ? { columns: source.columns } : {}),
    ...(source.chat ? { chat: source.chat } : {}),
  };
}

async function fetchSource(
  source: SourceSpec,
  sourceIndex: number,
  ctx: StageContext<DownloadConfig>,
): Promise<RecordOutcome> {
  const client = new HubClient(ctx.root.hub, { signal: ctx.signal, log: ctx.log });
  const hub = { repo: source.repo!, revision: source.revision ?? "main", files: source.files ?? [] };
  const fetched = await fetchHubFiles(client, hub, ctx.workDir, { signal: ctx.signal, log: ctx.log });
  if (fetched === "interrupted") {
    return { failed: { reason: "interrupted", detail: "partial download kept; rerun to continue it" } };
  }
  const out: DownloadedFileRecord[] = fetched.files.map((file, fileIndex) => ({
    id: `${hub.repo}/${file.path}`,
    ...readingOf(source),
    repo: hub.repo,
    path: file.path,
    revision: hub.revision,
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

/** A local source is read where it lies: each file's size and sha256 are what later stages check. */
async function fingerprintLocal(
  source: SourceSpec,
  sourceIndex: number,
  ctx: StageContext<DownloadConfig>,
): Promise<RecordOutcome> {
  const files = matchLocalPath(source.path!, acceptsName(source));
  if (files.length === 0) {
    throw new UserError(
      `source ${source.name}: \`path\` ${source.path} matches no ${source.format ?? "JSONL, JSON or Parquet"} file (from ${process.cwd()}); fix stages.download.sources[${sourceIndex}].path`,
    );
  }
  const out: DownloadedFileRecord[] = [];
  for (const [fileIndex, absolute] of files.entries()) {
    if (ctx.signal.aborted)
      return { failed: { reason: "interrupted", detail: "rerun to fingerprint the rest" } };
    const shown = shownPath(absolute);
    const before = statSync(absolute, { throwIfNoEntry: false });
    const { size, sha256 } = await describeLocalFile(absolute, shown);
    ctx.log.debug(`${source.name}: ${shown} (${size} bytes, sha256 ${sha256.slice(0, 12)})`);
    out.push({
      id: absolute,
      ...readingOf(source),
      path: shown,
      source_path: source.path!,
      size,
      sha256,
      local_path: absolute,
      ...(before ? { mtime_ms: before.mtimeMs } : {}),
      source_index: sourceIndex,
      file_index: fileIndex,
    });
  }
  return { out };
}
