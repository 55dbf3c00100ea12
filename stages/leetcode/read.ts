// The TACO files `download` fetched, read row by row, keeping only the wanted sources: the real
// train split is several GB, its LeetCode rows a small part of it, so nothing else is held. The
// problems come back in id order, whatever order the files were listed in.
import path from "node:path";
import { UserError } from "../../pipeline/errors.js";
import { readRows } from "../../pipeline/readers/index.js";
import type { Emitter, StageContext } from "../../pipeline/stage.js";
import type { DownloadedFileRecord } from "../download.js";
import { checkStillThere } from "../normalize.js";
import type { LeetcodeConfig } from "./config.js";
import type { LeetcodeStats } from "./summary.js";
import { readTacoRow, type TacoProblem } from "./taco.js";

export type ReadStats = LeetcodeStats["read"];

async function tacoFiles(ctx: StageContext<LeetcodeConfig>): Promise<DownloadedFileRecord[]> {
  const files: DownloadedFileRecord[] = [];
  for await (const record of ctx.read("download")) {
    const file = record as DownloadedFileRecord;
    if (file.source === ctx.config.source) files.push(file);
  }
  if (files.length === 0) {
    throw new UserError(
      `leetcode: download has no files of source '${ctx.config.source}'; add TACO to stages.download.sources ` +
        "(see configs/default.yaml) or set stages.leetcode.source to the name you gave it",
    );
  }
  return files.sort((a, b) => a.source_index - b.source_index || a.file_index - b.file_index);
}

/** `train-00000-of-00001.parquet` -> `train-00000-of-00001`: short, and unique within a dataset. */
function fileStem(file: string): string {
  return path.basename(file).replace(/\.(?:parquet|jsonl?|json)(?:\.gz)?$/i, "");
}

export async function readProblems(
  ctx: StageContext<LeetcodeConfig>,
  emit: Emitter,
): Promise<{ problems: TacoProblem[]; stats: ReadStats }> {
  const stats: ReadStats = { files: 0, rows: 0, kept: 0, rejected: {}, other_sources: {} };
  const problems: TacoProblem[] = [];
  const keep = ctx.config.sources.map((s) => s.toLowerCase());
  const bump = (map: Record<string, number>, key: string) => {
    map[key] = (map[key] ?? 0) + 1;
  };
  for (const file of await tacoFiles(ctx)) {
    const local = path.resolve(ctx.dataDir, file.local_path);
    await checkStillThere(local, file);
    stats.files++;
    const stem = fileStem(file.path);
    const rows = readRows(local, {
      maxRowBytes: ctx.config.max_row_bytes,
      ...(file.format ? { format: file.format } : {}),
    });
    for await (const row of rows) {
      if (ctx.signal.aborted) return { problems, stats };
      if (ctx.limit !== undefined && row.index >= ctx.limit) break;
      stats.rows++;
      const id = `${file.source}:${stem}:${String(row.index).padStart(6, "0")}`;
      if (row.error) {
        bump(stats.rejected, row.error.reason);
        await emit.reject({
          id,
          reason: row.error.reason,
          detail: `${file.path} row ${row.index}: ${row.error.detail}`,
          record: row.error.prefix,
        });
        continue;
      }
      // a local copy of TACO (`path:`) has no repo or commit: its path and sha256 say where it came from
      const repo = file.repo ?? "local";
      const where = { id, repo, file: file.path, row: row.index, commit: file.commit ?? file.sha256 ?? "" };
      const result = readTacoRow(row.value, where, keep);
      if (result.kind === "other-source") bump(stats.other_sources, result.source);
      else if (result.kind === "reject") {
        bump(stats.rejected, result.reject.reason);
        await emit.reject(result.reject);
      } else {
        stats.kept++;
        problems.push(result.problem);
      }
    }
  }
  problems.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { problems, stats };
}
