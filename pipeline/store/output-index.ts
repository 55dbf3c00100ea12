// A complete stage's outputs, indexed: each output record's id, a few of its fields, its place in
// the stage's input order and where its entry's line lies in the parts. A downstream stage that takes
// a sample of 500 out of 150K records chooses it from the index (a few MB) and reads those 500 lines
// by offset, instead of parsing the whole stage's output (680 MB for the filter at the paper's scale)
// before its first record can start.
//
// The index is `parts/outputs.index.jsonl`: a header naming the fields and the seal it was made from
// (every part's name, size and SHA-256), then one line per output record. It is good exactly while
// its seal is the stage's seal, so a stage recomputed, reset or damaged never serves a stale index:
// it is made again from the parts, checked against the seal as they are read. A stage that declares
// `indexed` fields makes it in the pass that seals it; any other complete stage gets it on first use.
import { createHash } from "node:crypto";
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { hostname } from "node:os";
import { basename, join } from "node:path";
import type { PipelineRecord } from "../record.js";
import { DoneSet } from "./done-set.js";
import { type Entry, readEntries, type StoreError } from "./parts.js";
import type { PartSeal } from "./seal.js";

export const INDEX_FILE = "outputs.index.jsonl";
const VERSION = 1;

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
}

interface Header {
  version: number;
  fields: string[];
  parts: PartSeal[];
}

export interface BuiltIndex {
  rows: IndexRow[];
  /** the parts as read: their names, sizes and SHA-256 (the stage's seal, when it is being sealed) */
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
    const hash = createHash("sha256");
    let bytes = 0;
    let offset = 0;
    let length = 0;
    for await (const entry of readEntries(path, {
      want: "o",
      onBytes: (chunk) => {
        hash.update(chunk);
        bytes += chunk.length;
      },
      onLine: (at, n) => {
        offset = at;
        length = n;
      },
    })) {
      if (entry.f) continue;
      if (entry.s >= 0) {
        if (seen.has(entry.s)) continue;
        seen.add(entry.s);
      }
      if ("skipped" in entry) continue;
      const outputs = entry.o ?? [];
      for (let item = 0; item < outputs.length; item++) {
        rows.push({
          id: outputs[item]!.id,
          at: entry.g ?? entry.s,
          fields: pick(outputs[item]!, fields),
          part,
          offset,
          length,
          item,
        });
      }
    }
    seal.push({ file: basename(path), bytes, sha256: hash.digest("hex") });
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

/** The saved index of `partsDir` if it was made from exactly `seal` and holds `fields`. */
export function loadIndex(
  partsDir: string,
  seal: readonly PartSeal[],
  fields: readonly string[],
): IndexRow[] | undefined {
  const path = join(partsDir, INDEX_FILE);
  if (!existsSync(path)) return undefined;
  const lines = readFileSync(path, "utf8").split("\n");
  let header: Header;
  try {
    header = JSON.parse(lines[0]!) as Header;
  } catch {
    return undefined;
  }
  if (!Array.isArray(header?.parts) || !Array.isArray(header.fields)) return undefined;
  if (header.version !== VERSION || !sameSeal(header.parts, seal)) return undefined;
  if (!fields.every((f) => header.fields.includes(f))) return undefined;
  // a kill while it was written leaves no file (it is renamed into place): a short one is damage
  if (lines.at(-1) !== "") return undefined;
  // one parse of every row as one array: a parse per line costs twice as much
  let values: [string, number, number, number, number, number, ...(string | null)[]][];
  try {
    values = JSON.parse(`[${lines.slice(1, -1).join(",")}]`);
  } catch {
    // not as this tool writes it (two machines wrote it at once, a disk fault): made again
    return undefined;
  }
  const rows: IndexRow[] = new Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const [id, at, part, offset, length, item, ...picked] = values[i]!;
    const fields: Record<string, string> = {};
    for (let f = 0; f < header.fields.length; f++) {
      const value = picked[f];
      if (typeof value === "string") fields[header.fields[f]!] = value;
    }
    rows[i] = { id, at, fields, part, offset, length, item };
  }
  return rows;
}

/** Writes the index beside the parts it was made from, whole or not at all. */
export function saveIndex(partsDir: string, built: BuiltIndex, fields: readonly string[]): void {
  const header: Header = { version: VERSION, fields: [...fields], parts: built.seal };
  const lines = [JSON.stringify(header)];
  for (const row of built.rows) {
    lines.push(
      JSON.stringify([
        row.id,
        row.at,
        row.part,
        row.offset,
        row.length,
        row.item,
        ...fields.map((f) => row.fields[f] ?? null),
      ]),
    );
  }
  // a name of its own per process: two readers of a stage, on one machine or on several sharing the
  // data dir, may make its index at once; each renames a whole one into place
  const tmp = join(partsDir, `${INDEX_FILE}.${hostname()}.${process.pid}.tmp`);
  try {
    writeFileSync(tmp, `${lines.join("\n")}\n`);
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
 * The parts' sizes were checked against the seal; each line read is checked to be the entry the
 * index names (its position and the record's id), so a part changed in place stops the read.
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
      let entry: Entry | undefined;
      try {
        entry = JSON.parse(buffer.subarray(0, bytesRead).toString("utf8")) as Entry;
      } catch {
        entry = undefined;
      }
      const record = entry?.o?.[row.item];
      if (!entry || (entry.g ?? entry.s) !== row.at || record?.id !== row.id) {
        throw damaged(`${paths[row.part]} at byte ${row.offset} is not the entry its index names`);
      }
      yield record;
    }
  } finally {
    for (const file of files.values()) await file.close();
  }
}
