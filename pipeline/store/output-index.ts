// A complete stage's outputs, indexed (`parts/outputs.index.jsonl`, made on first use and kept): each
// output's id, a few string fields, its place in the input order, its entry line's offset and hash,
// so a downstream stage's sample of 500 of 150K records reads 500 lines, not the whole output. The
// header names the seal it was made from and its rows' hash: an index of other parts, or changed,
// never serves, and a line read must hash as its row says, so a part changed in place stops the read.
import { createHash, hash } from "node:crypto";
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { hostname } from "node:os";
import { basename, join } from "node:path";
import type { PipelineRecord } from "../record.js";
import { DoneSet } from "./done-set.js";
import { type Entry, readEntries, type StoreError } from "./parts.js";
import type { PartSeal } from "./seal.js";

export const INDEX_FILE = "outputs.index.jsonl";
const VERSION = 2;
/** hex digits of a line's SHA-256 kept in its row */
const LINE_HASH = 16;

/** One output record of the stage. */
export interface IndexRow {
  id: string;
  /** its input's position in the whole stage's input (a shard's `g`): the order `read` yields */
  at: number;
  /** the index's fields: a field the record holds as a string, else absent */
  fields: Readonly<Record<string, string>>;
  /** where its entry's line is: the part's number in the seal, byte offset and length */
  part: number;
  offset: number;
  length: number;
  /** its place among its entry's outputs */
  item: number;
  /** the first hex digits of its entry line's SHA-256, checked when the line is read */
  sha: string;
}

interface Header {
  version: number;
  fields: string[];
  parts: PartSeal[];
  /** SHA-256 of every byte after the header's line */
  rows: string;
}

type StoredRow = [string, number, number, number, number, number, string, ...(string | null)[]];

const lineHash = (line: string | Buffer) => hash("sha256", line).slice(0, LINE_HASH);

export interface IndexOptions {
  /** keep an index made now for the next reader (default); a dry run writes nothing */
  save?: boolean;
}

export interface BuiltIndex {
  rows: IndexRow[];
  /** the parts as read: their names, sizes and SHA-256, to check against the stage's seal */
  seal: PartSeal[];
}

/**
 * Reads the parts once, hashing every byte, and indexes each output of each input's first committed
 * entry (the rule every reader of the store keeps; a failure never counts).
 */
export async function buildIndex(paths: readonly string[], fields: readonly string[]): Promise<BuiltIndex> {
  const rows: IndexRow[] = [];
  const seal: PartSeal[] = [];
  const seen = new DoneSet();
  for (const [part, path] of paths.entries()) {
    const digest = createHash("sha256");
    let bytes = 0;
    let offset = 0;
    let length = 0;
    let text = "";
    for await (const entry of readEntries(path, {
      want: "o",
      onBytes: (chunk) => {
        digest.update(chunk);
        bytes += chunk.length;
      },
      onLine: (at, n, line) => {
        offset = at;
        length = n;
        text = line;
      },
    })) {
      if (entry.f) continue;
      if (entry.s >= 0) {
        if (seen.has(entry.s)) continue;
        seen.add(entry.s);
      }
      if ("skipped" in entry) continue;
      const outputs = entry.o ?? [];
      const sha = outputs.length > 0 ? lineHash(text) : "";
      for (let item = 0; item < outputs.length; item++) {
        rows.push({
          id: outputs[item]!.id,
          at: entry.g ?? entry.s,
          fields: pick(outputs[item]!, fields),
          part,
          offset,
          length,
          item,
          sha,
        });
      }
    }
    seal.push({ file: basename(path), bytes, sha256: digest.digest("hex") });
  }
  return { rows, seal };
}

function pick(record: PipelineRecord, fields: readonly string[]): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const field of fields) {
    const value = record[field];
    if (typeof value === "string") picked[field] = value;
  }
  return picked;
}

/** Which outputs of a stage to read: those whose `field` `where` takes, with a `count` a seeded sample. */
export interface SampleOptions {
  /** a string field of the records (absent, or not a string: `where` is given undefined) */
  field: string;
  where(value: string | undefined): boolean;
  /** at most this many records; unset: every record `where` takes */
  count?: number | undefined;
  seed: number;
}

/**
 * The rows `where` takes and, with a count, the `count` of them with the smallest SHA-256 of
 * (seed, id), then the smaller id: the same for the same seed and input on every run, independent of
 * the input's order, and stable when records are added. In upstream order, as resume-by-position needs.
 */
export function sampleRows(rows: readonly IndexRow[], options: SampleOptions): IndexRow[] {
  const taken = rows.filter((row) => options.where(row.fields[options.field]));
  const { count } = options;
  if (count === undefined || taken.length <= count) return taken;
  const keyed = taken.map((row, at) => ({
    key: hash("sha256", `${options.seed}\n${row.id}`).slice(0, 16),
    row,
    at,
  }));
  keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.row.id < b.row.id ? -1 : 1));
  return keyed
    .slice(0, count)
    .sort((a, b) => a.at - b.at)
    .map((k) => k.row);
}

/** Rows parsed at a time: one parse of many rows as an array costs half a parse per row. */
const ROWS_AT_ONCE = 10_000;

/**
 * The saved index of `partsDir` if it was made from exactly `seal`, holds `fields` and is whole
 * (its rows hash as its header says); undefined otherwise, for the caller to make it again.
 */
export function loadIndex(
  partsDir: string,
  seal: readonly PartSeal[],
  fields: readonly string[],
): IndexRow[] | undefined {
  const path = join(partsDir, INDEX_FILE);
  if (!existsSync(path)) return undefined;
  const file = readFileSync(path);
  const headerEnd = file.indexOf(10);
  if (headerEnd < 0) return undefined;
  let header: Header;
  try {
    header = JSON.parse(file.toString("utf8", 0, headerEnd)) as Header;
  } catch {
    return undefined;
  }
  if (!Array.isArray(header?.parts) || !Array.isArray(header.fields)) return undefined;
  if (header.version !== VERSION || !sameSeal(header.parts, seal)) return undefined;
  if (!fields.every((f) => header.fields.includes(f))) return undefined;
  // written whole and renamed into place: rows that do not hash as the header says were changed
  if (hash("sha256", file.subarray(headerEnd + 1)) !== header.rows) return undefined;
  const rows: IndexRow[] = [];
  let batch: string[] = [];
  const flush = () => {
    for (const [id, at, part, offset, length, item, sha, ...values] of JSON.parse(
      `[${batch.join(",")}]`,
    ) as StoredRow[]) {
      const picked: Record<string, string> = {};
      for (let f = 0; f < header.fields.length; f++) {
        const value = values[f];
        if (typeof value === "string") picked[header.fields[f]!] = value;
      }
      rows.push({ id, at, fields: picked, part, offset, length, item, sha });
    }
    batch = [];
  };
  for (let at = headerEnd + 1, nl = file.indexOf(10, at); nl >= 0; at = nl + 1, nl = file.indexOf(10, at)) {
    batch.push(file.toString("utf8", at, nl));
    if (batch.length === ROWS_AT_ONCE) flush();
  }
  flush();
  return rows;
}

/** Writes the index beside the parts it was made from, whole or not at all. */
export function saveIndex(partsDir: string, built: BuiltIndex, fields: readonly string[]): void {
  const body: Buffer[] = [];
  let lines: string[] = [];
  const flush = () => {
    body.push(Buffer.from(lines.join("")));
    lines = [];
  };
  for (const row of built.rows) {
    const stored: StoredRow = [
      row.id,
      row.at,
      row.part,
      row.offset,
      row.length,
      row.item,
      row.sha,
      ...fields.map((f) => row.fields[f] ?? null),
    ];
    lines.push(`${JSON.stringify(stored)}\n`);
    if (lines.length === ROWS_AT_ONCE) flush();
  }
  flush();
  const digest = createHash("sha256");
  for (const chunk of body) digest.update(chunk);
  const header: Header = {
    version: VERSION,
    fields: [...fields],
    parts: built.seal,
    rows: digest.digest("hex"),
  };
  // a name of its own per process: two readers of a stage, on one machine or on several sharing the
  // data dir, may make its index at once; each renames a whole one into place
  const tmp = join(partsDir, `${INDEX_FILE}.${hostname()}.${process.pid}.tmp`);
  try {
    writeFileSync(tmp, Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`), ...body]));
    renameSync(tmp, join(partsDir, INDEX_FILE));
  } finally {
    rmSync(tmp, { force: true });
  }
}

function sameSeal(a: readonly PartSeal[], b: readonly PartSeal[]): boolean {
  return (
    a.length === b.length &&
    a.every((p, i) => p.file === b[i]!.file && p.bytes === b[i]!.bytes && p.sha256 === b[i]!.sha256)
  );
}

/**
 * The records of `rows` of the parts at `paths`, in the order given, each line read by its offset.
 * The parts' sizes were checked against the seal; each line read must hash as its row says and hold
 * the record the row names, so a part changed in place stops the read.
 */
export async function* readIndexed(
  paths: readonly string[],
  rows: Iterable<IndexRow>,
  damaged: (what: string) => StoreError,
): AsyncGenerator<PipelineRecord> {
  const files = new Map<number, Awaited<ReturnType<typeof open>>>();
  try {
    for (const row of rows) {
      let file = files.get(row.part);
      if (!file) {
        const path = paths[row.part];
        if (path === undefined) throw damaged(`its index names part ${row.part}, which is not there`);
        file = await open(path, "r");
        files.set(row.part, file);
      }
      const buffer = Buffer.allocUnsafe(row.length);
      const { bytesRead } = await file.read(buffer, 0, row.length, row.offset);
      const line = buffer.subarray(0, bytesRead);
      // the line as it was when the index was made (which was checked against the seal then)
      let record: PipelineRecord | undefined;
      if (bytesRead === row.length && lineHash(line) === row.sha) {
        const entry = JSON.parse(line.toString("utf8")) as Entry;
        record = entry.o?.[row.item];
      }
      if (record?.id !== row.id) {
        throw damaged(`${paths[row.part]} at byte ${row.offset} is not the entry its index names`);
      }
      yield record;
    }
  } finally {
    for (const file of files.values()) await file.close();
  }
}
