// How `pnpm pipeline status` shows the stages: the table's cells, a shard's rows under its stage, the
// rerun commands, what each endpoint did, one stage's detail (`--stage X`) and the `--json` rows.

import { downloadSummarySchema, sourceLines } from "../../stages/download.js";
import { normalizeSummarySchema } from "../../stages/normalize.js";
import { batchRows } from "../llm/batch/status.js";
import { formatDuration } from "../runner/progress.js";
import type { StageStatus } from "../runner.js";
import { describeSandbox, meanLatencyMs } from "../usage.js";
import { printTable } from "./table.js";

/** The sandbox's busy time: tenths of a second while short, then as elapsed times are shown. */
export function busyText(ms: number): string {
  return ms < 60_000 ? `${(ms / 1000).toFixed(1)}s` : formatDuration(ms);
}

/** Widest reason the table shows; the rest is one `status --stage X` away. */
const REASON_WIDTH = 60;

/**
 * One line per stage however long its reason: a multi-line LLM error in the state column padded
 * every row of the table to its width.
 */
export function stateCell(s: StageStatus): string {
  if (!s.reason) return s.state;
  const flat = s.reason.replace(/\s+/g, " ").trim();
  const reason = flat.length > REASON_WIDTH ? `${flat.slice(0, REASON_WIDTH - 3).trimEnd()}...` : flat;
  return `${s.state} (${reason})`;
}

export function printStageDetail(s: StageStatus): void {
  const m = s.manifest;
  const out = process.stdout;
  out.write(`stage:   ${s.stage}\nstate:   ${s.state}\n`);
  if (s.reason) out.write(`reason:  ${s.reason}\n`);
  if (m?.lastError && m.lastError !== s.reason) out.write(`last error:\n${m.lastError}\n`);
  if (m) {
    const c = m.counts;
    out.write(`records: ${c.in} in, ${c.out} out, ${c.rejected} rejected, ${c.failed} failed\n`);
    const u = m.usage;
    if (u) {
      out.write(
        `llm:     ${u.requests} requests, ${u.cachedRequests} cached, ${u.promptTokens + u.completionTokens} tokens` +
          `${u.costUsd ? `, $${u.costUsd.toFixed(2)}` : ""}\n`,
      );
    }
    if (m.sandbox) out.write(`sandbox: ${describeSandbox(m.sandbox)}\n`);
    out.write(`runs:    ${m.runs}, ${formatDuration(m.elapsedMs)} in all\n`);
  }
  out.write(`config:  ${s.configHash}\n`);
}

/** A sharded stage's row, then one row per shard (`  shard K/N`), each with its own counts. */
export function withShardRows(s: StageStatus): StageStatus[] {
  const shards = (s.shards ?? []).map((shard) => ({
    stage: `  shard ${shard.index}/${shard.count}`,
    state: shard.state as StageStatus["state"],
    configHash: shard.manifest?.configHash ?? "",
    ...(shard.reason ? { reason: shard.reason } : {}),
    ...(shard.manifest ? { manifest: shard.manifest } : {}),
  }));
  return [s, ...shards];
}

/** Under the table: the exact command that (re)runs each shard that is failed, stale or not started. */
export function shardCommands(rows: StageStatus[]): string[] {
  const lines: string[] = [];
  for (const row of rows) {
    for (const shard of row.shards ?? []) {
      if (!shard.command) continue;
      const why = shard.reason ? ` (${shard.reason.replace(/\s+/g, " ").slice(0, 120)})` : "";
      lines.push(`${row.stage} shard ${shard.index}/${shard.count} ${shard.state}${why}: ${shard.command}`);
    }
  }
  return lines;
}

/** What a stage's and a shard's `--json` rows both show of their manifest. */
const figures = (m: StageStatus["manifest"]) => ({
  counts: m?.counts ?? null,
  usage: m?.usage ?? null,
  sandbox: m?.sandbox ?? null,
  elapsedMs: m?.elapsedMs ?? null,
});

function shardJson(shard: NonNullable<StageStatus["shards"]>[number]) {
  const m = shard.manifest;
  return {
    index: shard.index,
    count: shard.count,
    state: shard.state,
    reason: shard.reason ?? null,
    command: shard.command ?? null,
    ...figures(m),
    pid: m?.pid ?? null,
    host: m?.host ?? null,
    updatedAt: m?.updatedAt ?? null,
    outputHash: m?.outputHash ?? null,
  };
}

export function statusJson(s: StageStatus) {
  const m = s.manifest;
  return {
    stage: s.stage,
    state: s.state,
    reason: s.reason ?? null,
    configHash: s.configHash,
    ...figures(m),
    runs: m?.runs ?? 0,
    startedAt: m?.startedAt ?? null,
    finishedAt: m?.finishedAt ?? null,
    outputHash: m?.outputHash ?? null,
    stats: m?.stats ?? null,
    lastError: m?.lastError ?? null,
    shards: s.shards ? s.shards.map(shardJson) : null,
  };
}

/** Under the table: the batches of the LLM roles in batch mode (llm.<role>.batch), stage by stage. */
export function printBatches(stages: { stage: string; dir: string }[]): void {
  const rows = stages.flatMap(({ stage, dir }) => batchRows(dir).map((b) => ({ stage, ...b })));
  if (rows.length === 0) return;
  process.stdout.write("\nbatches:\n");
  printTable(
    ["stage", "role", "round", "batch", "state", "done", "failed", "total", "age"],
    rows.map((b) => [
      b.stage,
      b.role,
      b.round,
      b.id,
      b.state,
      b.done,
      b.failed,
      b.total,
      formatDuration(b.ageMs),
    ]),
  );
}

/** Under the table: each downloaded source, where it is, its version, adapter, files and seed pairs. */
export function sourceStatusLines(rows: StageStatus[]): string[] {
  const stats = (stage: string) => rows.find((r) => r.stage === stage)?.manifest?.stats;
  const download = downloadSummarySchema.safeParse(stats("download"));
  if (!download.success) return [];
  const normalize = normalizeSummarySchema.safeParse(stats("normalize"));
  return sourceLines(download.data, normalize.success ? normalize.data.by_resource : undefined).map(
    (l) =>
      `source ${l.name}: ${l.where} (${l.version}), adapter ${l.adapter}, ${l.files} file${l.files === 1 ? "" : "s"}` +
      (l.rows === undefined ? "" : `, ${l.rows} seed pairs`),
  );
}

/** One row per stage and endpoint; nothing when no stage has sent anything to one. */
export function printEndpointUsage(
  rows: readonly StageStatus[],
  out: NodeJS.WritableStream = process.stdout,
): void {
  const table: (string | number)[][] = [];
  for (const row of rows) {
    for (const [name, s] of Object.entries(row.manifest?.usage?.endpoints ?? {})) {
      const mean = meanLatencyMs(s);
      // a /run_code server of several: the programs it ran for the committed records
      const ran = row.manifest?.sandbox?.endpoints?.[name];
      table.push([
        row.stage,
        name,
        s.requests,
        s.failures,
        s.ejections,
        mean === undefined ? "-" : `${Math.round(mean)} ms`,
        ran ? ran.runs : "",
        ran ? `${(ran.busyMs / 1000).toFixed(1)} s` : "",
      ]);
    }
  }
  if (table.length === 0) return;
  out.write("\n");
  printTable(
    ["stage", "endpoint", "requests", "failed", "ejections", "mean latency", "programs", "busy"],
    table,
    out,
  );
}
