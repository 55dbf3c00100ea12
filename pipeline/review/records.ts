// What the review app lists: every committed output and reject of a stage, one row each with the
// fields people filter on and where its line is, kept in `<data_dir>/review/index.sqlite`. Parts only
// ever grow, so a running stage is indexed up to its last complete line and then from there on; a part
// that shrank or was replaced (a rerun, a reset) makes its stage indexed again. Queries, sorting and
// paging run in SQLite, so a stage of 500K records is never held in memory; a record is read by offset.
import { closeSync, existsSync, openSync, readSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { UserError } from "../errors.js";
import type { PipelineRecord, Reject } from "../record.js";
import { openSqlite, type SqliteDatabase } from "../sqlite.js";
import type { Entry } from "../store/parts.js";
import { contentHash } from "./marks.js";

export const INDEX_FILE = join("review", "index.sqlite");

/** Outputs (`o`) or rejects (`r`). */
export type Kind = "o" | "r";

/** A stage as the app sees it: its files, and where it stands. */
export interface StageLook {
  name: string;
  /** complete, running, partial, stale, not started, disabled */
  state: string;
  reason?: string | undefined;
  /** its part files, in the order a reader reads them (a sharded stage's shards' parts in shard order) */
  parts: readonly string[];
}

/** What the app reads the run through (the CLI answers it with the runner): no service knows a stage. */
export interface ReviewSource {
  dataDir: string;
  /** the stages in pipeline order */
  stages: readonly string[];
  look(stage: string): StageLook;
}

/** A listed record: the filterable fields of its index row. */
export interface Row {
  stage: string;
  kind: Kind;
  id: string;
  method: string | null;
  lang: string | null;
  verdict: string | null;
  /** validate's gates that fired, `,a,b,` */
  gates: string | null;
  reason: string | null;
  /** source names (`magicoder`), `,a,b,` */
  source: string | null;
  hash: string;
}

interface Place {
  file: string;
  offset: number;
  length: number;
  item: number;
}

export interface Filter {
  method?: string | undefined;
  lang?: string | undefined;
  verdict?: string | undefined;
  gate?: string | undefined;
  reason?: string | undefined;
  source?: string | undefined;
  /** text anywhere in the record, any case */
  text?: string | undefined;
}

export const SORTS = ["position", "id", "method", "lang", "verdict"] as const;
export type Sort = (typeof SORTS)[number];

const SCHEMA = `CREATE TABLE IF NOT EXISTS parts (
  stage TEXT NOT NULL, file TEXT NOT NULL, ino INTEGER NOT NULL, bytes INTEGER NOT NULL,
  PRIMARY KEY (stage, file));
CREATE TABLE IF NOT EXISTS entries (stage TEXT NOT NULL, scope TEXT NOT NULL, s INTEGER NOT NULL,
  PRIMARY KEY (stage, scope, s));
CREATE TABLE IF NOT EXISTS rows (
  n INTEGER PRIMARY KEY, stage TEXT NOT NULL, kind TEXT NOT NULL, id TEXT NOT NULL,
  method TEXT, lang TEXT, verdict TEXT, gates TEXT, reason TEXT, source TEXT,
  hash TEXT NOT NULL, file TEXT NOT NULL, offset INTEGER NOT NULL, length INTEGER NOT NULL,
  item INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS origins (source TEXT NOT NULL, n INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS origins_by_source ON origins (source);
CREATE INDEX IF NOT EXISTS rows_by_stage ON rows (stage, kind, n);
CREATE INDEX IF NOT EXISTS rows_by_id ON rows (id, stage, kind);
CREATE INDEX IF NOT EXISTS rows_by_method ON rows (stage, kind, method, lang);
CREATE INDEX IF NOT EXISTS rows_by_lang ON rows (stage, kind, lang);`;

const VERSION = 1;

/** Bytes read at a time; a longer line is carried over into the next read. */
const CHUNK = 1 << 20;

/**
 * Calls `onLine` with each complete line of `path` from byte `from` to `to`, and its offset; returns the
 * offset after the last complete line (a torn last line, being written, is left for the next time).
 */
export function scanLines(
  path: string,
  from: number,
  to: number,
  onLine: (line: Buffer, offset: number) => void,
): number {
  const fd = openSync(path, "r");
  try {
    const buffer = Buffer.allocUnsafe(CHUNK);
    let carry: Buffer[] = [];
    let at = from;
    let lineStart = from;
    for (;;) {
      const read = readSync(fd, buffer, 0, Math.min(CHUNK, to - at), at);
      if (read === 0) break;
      at += read;
      const chunk = buffer.subarray(0, read);
      let start = 0;
      for (let nl = chunk.indexOf(10); nl >= 0; start = nl + 1, nl = chunk.indexOf(10, start)) {
        const piece = chunk.subarray(start, nl);
        const line = carry.length ? Buffer.concat([...carry, piece]) : piece;
        carry = [];
        if (line.length > 0) onLine(line, lineStart);
        lineStart += line.length + 1;
      }
      if (start < read) carry.push(Buffer.from(chunk.subarray(start)));
    }
    return lineStart;
  } finally {
    closeSync(fd);
  }
}

const list = (values: readonly string[]) => (values.length ? `,${[...new Set(values)].join(",")},` : null);
const str = (v: unknown) => (typeof v === "string" && v !== "" ? v : null);

type Fields = Omit<Row, "stage" | "kind" | "id" | "hash"> & { sources: string[] };

/** The fields people filter on, from a record (or a reject's copy of one) as any stage writes it. */
function fieldsOf(record: Record<string, unknown> | undefined, id: string, reason: string | null): Fields {
  const r = record ?? {};
  const validation = (
    r.meta as { validation?: { outcome?: unknown; gates?: { rule?: unknown }[] } } | undefined
  )?.validation;
  const sources = Array.isArray(r.sources) ? r.sources.filter((s): s is string => typeof s === "string") : [];
  const nameOf = (x: string) => x.slice(0, Math.max(0, x.indexOf(":"))) || null;
  const names = [
    str(r.resource) ?? str(r.source),
    ...sources.map(nameOf),
    sources.length ? null : nameOf(id),
  ];
  return {
    method: str(r.method),
    lang: str(r.lang),
    verdict: str(validation?.outcome),
    gates: list((validation?.gates ?? []).map((g) => String(g.rule))),
    reason,
    source: list(names.filter((x): x is string => x !== null)),
    sources: [...new Set(sources)],
  };
}

export class ReviewIndex {
  private readonly db: SqliteDatabase;

  /** the text search whose results `temp.hits` holds */
  private searched: string | undefined;

  constructor(private readonly source: ReviewSource) {
    this.db = openSqlite(join(source.dataDir, INDEX_FILE), { schema: "" });
    // an index another version made is made again, not misread
    this.db
      .transaction(() => {
        if (this.db.pragma("user_version", { simple: true }) === VERSION) return;
        for (const table of ["parts", "entries", "rows", "origins"])
          this.db.exec(`DROP TABLE IF EXISTS ${table}`);
        this.db.exec(SCHEMA);
        this.db.pragma(`user_version = ${VERSION}`);
      })
      .immediate();
  }

  close(): void {
    this.db.close();
  }

  /** The stage's state, after indexing what it committed since the last look. */
  refresh(stage: string): StageLook {
    if (!this.source.stages.includes(stage)) {
      throw new UserError(`no stage named ${stage}; the stages are: ${this.source.stages.join(", ")}`);
    }
    const look = this.source.look(stage);
    const known = this.db.prepare("SELECT file, ino, bytes FROM parts WHERE stage = ?").all(stage) as {
      file: string;
      ino: number;
      bytes: number;
    }[];
    const now = new Map(look.parts.filter(existsSync).map((p) => [p, statSync(p)]));
    const replaced = known.some((k) => {
      const st = now.get(k.file);
      return !st || st.ino !== k.ino || st.size < k.bytes;
    });
    if (replaced) this.forget(stage);
    const from = new Map(replaced ? [] : known.map((k) => [k.file, k.bytes]));
    for (const [file, st] of now) {
      if ((from.get(file) ?? 0) < st.size) this.indexPart(stage, file, st.ino, from.get(file) ?? 0);
    }
    return look;
  }

  private forget(stage: string): void {
    this.db.transaction(() => {
      this.db.prepare("DELETE FROM origins WHERE n IN (SELECT n FROM rows WHERE stage = ?)").run(stage);
      for (const table of ["parts", "entries", "rows"])
        this.db.prepare(`DELETE FROM ${table} WHERE stage = ?`).run(stage);
    })();
  }

  private indexPart(stage: string, file: string, ino: number, from: number): void {
    const scope = basename(dirname(dirname(file)));
    const seen = this.db.prepare("INSERT OR IGNORE INTO entries (stage, scope, s) VALUES (?, ?, ?)");
    const origin = this.db.prepare("INSERT INTO origins (source, n) VALUES (?, ?)");
    const insert = this.db.prepare(
      `INSERT INTO rows (stage, kind, id, method, lang, verdict, gates, reason, source, hash, file, offset, length, item)
       VALUES (@stage, @kind, @id, @method, @lang, @verdict, @gates, @reason, @source, @hash, @file, @offset, @length, @item)`,
    );
    this.db.transaction(() => {
      const end = scanLines(file, from, Number.POSITIVE_INFINITY, (line, offset) => {
        const text = line.toString("utf8");
        if (!text.includes('"o":[') && !text.includes('"r":[')) return;
        let entry: Entry;
        try {
          entry = JSON.parse(text) as Entry;
        } catch {
          return;
        }
        if (entry.f) return;
        // each input's first committed entry counts, as every reader of the store has it
        if (entry.s >= 0 && seen.run(stage, scope, entry.s).changes === 0) return;
        const place = { stage, file, offset, length: line.length };
        const add = (
          kind: Kind,
          id: string,
          record: Record<string, unknown> | undefined,
          item: number,
          reason: string | null,
          hashed: unknown,
        ) => {
          const { sources, ...fields } = fieldsOf(record, id, reason);
          const n = insert.run({
            ...place,
            ...fields,
            kind,
            id,
            hash: contentHash(hashed),
            item,
          }).lastInsertRowid;
          for (const source of sources) origin.run(source, n);
        };
        for (const [item, record] of (entry.o ?? []).entries())
          add("o", record.id, record, item, null, record);
        for (const [item, reject] of (entry.r ?? []).entries()) {
          const copy = reject.record as Record<string, unknown> | undefined;
          add("r", reject.id, copy, item, reject.reason, copy ?? reject);
        }
      });
      this.db
        .prepare("INSERT OR REPLACE INTO parts (stage, file, ino, bytes) VALUES (?, ?, ?, ?)")
        .run(stage, file, ino, end);
    })();
  }

  private where(stage: string, kind: Kind, filter: Filter): { sql: string; params: unknown[] } {
    const clauses = ["stage = ?", "kind = ?"];
    const params: unknown[] = [stage, kind];
    for (const key of ["method", "lang", "verdict", "reason"] as const) {
      const value = filter[key];
      if (value === undefined || value === "") continue;
      if (value === "(none)") clauses.push(`${key} IS NULL`);
      else {
        clauses.push(`${key} = ?`);
        params.push(value);
      }
    }
    for (const key of ["gate", "source"] as const) {
      const value = filter[key];
      if (!value) continue;
      clauses.push(`${key === "gate" ? "gates" : "source"} LIKE ? ESCAPE '\\'`);
      params.push(`%,${value.replace(/[\\%_]/g, (c) => `\\${c}`)},%`);
    }
    return { sql: clauses.join(" AND "), params };
  }

  /** Counts and one page of the rows `filter` takes, sorted; `text` reads the stage's lines once. */
  list(
    stage: string,
    kind: Kind,
    filter: Filter,
    options: { sort?: Sort; page?: number; size?: number } = {},
  ): { total: number; filtered: number; rows: Row[] } {
    const total = (
      this.db.prepare("SELECT COUNT(*) AS c FROM rows WHERE stage = ? AND kind = ?").get(stage, kind) as {
        c: number;
      }
    ).c;
    let { sql, params } = this.where(stage, kind, filter);
    if (filter.text) {
      this.searchText(stage, kind, filter.text);
      sql += " AND n IN (SELECT n FROM temp.hits)";
    }
    const filtered = (
      this.db.prepare(`SELECT COUNT(*) AS c FROM rows WHERE ${sql}`).get(...params) as { c: number }
    ).c;
    const sort =
      options.sort && SORTS.includes(options.sort) && options.sort !== "position" ? options.sort : "n";
    const size = Math.min(Math.max(1, Math.floor(options.size ?? 50)), 500);
    const page = Math.max(0, Math.floor(options.page ?? 0));
    const rows = this.db
      .prepare(
        `SELECT stage, kind, id, method, lang, verdict, gates, reason, source, hash FROM rows WHERE ${sql}
         ORDER BY ${sort}, n LIMIT ? OFFSET ?`,
      )
      .all(...params, size, page * size) as Row[];
    return { total, filtered, rows };
  }

  /** Fills `temp.hits` with the rows of `stage` whose line holds `text` (any case). */
  private searchText(stage: string, kind: Kind, text: string): void {
    const files = this.db
      .prepare("SELECT file, bytes FROM parts WHERE stage = ? ORDER BY file")
      .all(stage) as {
      file: string;
      bytes: number;
    }[];
    // paging through one search's results reads the stage once
    const key = JSON.stringify([stage, kind, text, files]);
    if (key === this.searched) return;
    this.db.exec("CREATE TEMP TABLE IF NOT EXISTS hits (n INTEGER PRIMARY KEY); DELETE FROM temp.hits;");
    this.searched = undefined;
    // as it appears inside a JSON string: quotes, backslashes and newlines escaped
    const needle = JSON.stringify(text.toLowerCase()).slice(1, -1);
    const hits: number[] = [];
    const rowsOf = this.db.prepare(
      "SELECT n, offset, item FROM rows WHERE stage = ? AND kind = ? AND file = ?",
    );
    for (const { file, bytes } of files) {
      // the items of each line that hold the text, by the line's offset
      const found = new Map<number, number[]>();
      scanLines(file, 0, bytes, (line, offset) => {
        const json = line.toString("utf8");
        if (!json.toLowerCase().includes(needle)) return;
        const entry = JSON.parse(json) as Entry;
        const items: unknown[] = (kind === "o" ? entry.o : entry.r) ?? [];
        const which = [...items.keys()].filter((i) =>
          JSON.stringify(items[i]).toLowerCase().includes(needle),
        );
        if (which.length) found.set(offset, which);
      });
      if (found.size === 0) continue;
      for (const row of rowsOf.iterate(stage, kind, file) as Iterable<{
        n: number;
        offset: number;
        item: number;
      }>)
        if (found.get(row.offset)?.includes(row.item)) hits.push(row.n);
    }
    const hit = this.db.prepare("INSERT INTO temp.hits (n) VALUES (?)");
    this.db.transaction(() => {
      for (const n of hits) hit.run(n);
    })();
    this.searched = key;
  }

  /** How many rows hold each value of a field, for the filter menus. */
  facets(stage: string, kind: Kind): Record<string, Record<string, number>> {
    const result: Record<string, Record<string, number>> = {};
    for (const field of ["method", "lang", "verdict", "reason", "gates", "source"] as const) {
      const counts: Record<string, number> = {};
      const rows = this.db
        .prepare(
          `SELECT ${field} AS v, COUNT(*) AS c FROM rows WHERE stage = ? AND kind = ? GROUP BY ${field}`,
        )
        .all(stage, kind) as { v: string | null; c: number }[];
      for (const { v, c } of rows) {
        const values =
          field === "gates" || field === "source" ? (v ?? "").split(",").filter(Boolean) : [v ?? "(none)"];
        for (const value of values) counts[value] = (counts[value] ?? 0) + c;
      }
      result[field === "gates" ? "gate" : field] = counts;
    }
    return result;
  }

  /** Where `id` is, in every stage indexed so far: its rows, by stage order. */
  find(id: string): Row[] {
    return this.db
      .prepare(
        "SELECT stage, kind, id, method, lang, verdict, gates, reason, source, hash FROM rows WHERE id = ? ORDER BY n",
      )
      .all(id) as Row[];
  }

  /** The rows made from `id` (records whose `sources` name it). */
  madeFrom(id: string, limit = 20): Row[] {
    return this.db
      .prepare(
        `SELECT stage, kind, id, method, lang, verdict, gates, reason, rows.source, hash FROM origins
         JOIN rows USING (n) WHERE origins.source = ? ORDER BY n LIMIT ?`,
      )
      .all(id, limit) as Row[];
  }

  /** The record (or reject) `id` of `stage`, read by its offset; undefined when the stage has none. */
  read(stage: string, kind: Kind, id: string): { row: Row; record: PipelineRecord | Reject } | undefined {
    const found = this.db
      .prepare(
        "SELECT stage, kind, id, method, lang, verdict, gates, reason, source, hash, file, offset, length, item FROM rows WHERE stage = ? AND kind = ? AND id = ? ORDER BY n LIMIT 1",
      )
      .get(stage, kind, id) as (Row & Place) | undefined;
    if (!found) return undefined;
    const { file, offset, length, item, ...row } = found;
    const buffer = Buffer.allocUnsafe(length);
    const fd = openSync(file, "r");
    try {
      readSync(fd, buffer, 0, length, offset);
    } finally {
      closeSync(fd);
    }
    let record: PipelineRecord | Reject | undefined;
    try {
      const entry = JSON.parse(buffer.toString("utf8")) as Entry;
      record = (kind === "o" ? entry.o : entry.r)?.[item];
    } catch {
      record = undefined;
    }
    if (record?.id !== id) {
      throw new UserError(
        `${file} at byte ${offset} no longer holds ${id}: the stage changed while it was read; look again`,
      );
    }
    return { row, record };
  }

  /** Output ids and their method and language, for drawing a sample. */
  strata(stage: string): { id: string; method: string | null; lang: string | null }[] {
    return this.db
      .prepare("SELECT id, method, lang FROM rows WHERE stage = ? AND kind = 'o' ORDER BY n")
      .all(stage) as { id: string; method: string | null; lang: string | null }[];
  }
}
