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
import { fieldsOf, linesHolding, scanLines } from "./lines.js";
import { contentHash } from "./marks.js";

/** Not found (an unknown stage or id): the server answers 404, the CLI exits 2. */
export class NotFound extends UserError {}

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
  /** the stage that makes the release, and the stage whose outputs it releases less its own rejects */
  release?: { stage: string; from: string };
}

/** A listed record: the filterable fields of its index row. */
export interface Row {
  stage: string;
  kind: Kind;
  id: string;
  method: string | null;
  lang: string | null;
  verdict: string | null;
  /** validate's gates that fired, comma-separated */
  gates: string | null;
  reason: string | null;
  /** source names (`magicoder`), comma-separated */
  source: string | null;
  hash: string;
}

/** What a list may be filtered by: a field's value, or (`text`) text anywhere in the record, any case. */
export const FILTERS = ["method", "lang", "verdict", "gate", "reason", "source", "text"] as const;
export type Filter = Partial<Record<(typeof FILTERS)[number], string | undefined>>;

export const SORTS = ["position", "id", "method", "lang", "verdict"] as const;
export type Sort = (typeof SORTS)[number];

const SCHEMA = `CREATE TABLE parts (
  part INTEGER PRIMARY KEY, stage TEXT NOT NULL, file TEXT NOT NULL, ino INTEGER NOT NULL,
  bytes INTEGER NOT NULL, UNIQUE (stage, file));
CREATE TABLE entries (stage TEXT NOT NULL, scope TEXT NOT NULL, s INTEGER NOT NULL,
  PRIMARY KEY (stage, scope, s)) WITHOUT ROWID;
CREATE TABLE rows (
  n INTEGER PRIMARY KEY, stage TEXT NOT NULL, kind TEXT NOT NULL, id TEXT NOT NULL, method TEXT,
  lang TEXT, verdict TEXT, reason TEXT, gates TEXT, source TEXT, hash TEXT NOT NULL,
  part INTEGER NOT NULL, offset INTEGER NOT NULL, length INTEGER NOT NULL, item INTEGER NOT NULL);
CREATE INDEX rows_by_id ON rows (id);
CREATE INDEX rows_by_method ON rows (stage, kind, method);
CREATE INDEX rows_by_lang ON rows (stage, kind, lang);
CREATE INDEX rows_by_verdict ON rows (stage, kind, verdict);
-- a row's gates (g), source names (s) and the ids it was made from (o), one row each
CREATE TABLE tags (stage TEXT NOT NULL, kind TEXT NOT NULL, field TEXT NOT NULL, value TEXT NOT NULL,
  n INTEGER NOT NULL);
CREATE INDEX tags_by_value ON tags (field, value, stage, kind, n);`;

const VERSION = 2;
type PartRow = { part: number; file: string; ino: number; bytes: number };
const TABLES = ["parts", "entries", "rows", "tags"];
const ROW = "stage, kind, id, method, lang, verdict, gates, reason, source, hash";
/** the row's own columns people filter on, and the fields kept in `tags`, one row per value */
const COLUMNS = ["method", "lang", "verdict", "reason"] as const;
const TAGS = [
  ["gate", "g"],
  ["source", "s"],
] as const;

export class ReviewIndex {
  private readonly db: SqliteDatabase;
  /** the text search whose results `temp.hits` holds */
  private searched: string | undefined;
  /** each stage's and kind's row count, until it indexes more */
  private readonly totals = new Map<string, number>();

  constructor(private readonly source: ReviewSource) {
    this.db = openSqlite(join(source.dataDir, "review", "index.sqlite"), { schema: "" });
    // an index another version made is made again, not misread
    this.db
      .transaction(() => {
        if (this.db.pragma("user_version", { simple: true }) === VERSION) return;
        for (const table of [...TABLES, "origins"]) this.db.exec(`DROP TABLE IF EXISTS ${table}`);
        this.db.exec(SCHEMA);
        this.db.pragma(`user_version = ${VERSION}`);
      })
      .immediate();
  }

  close(): void {
    this.db.close();
  }

  /** The stage's state, after indexing what it committed since the last look (`onIndex`: how many bytes). */
  refresh(stage: string, onIndex?: (bytes: number) => void): StageLook {
    if (!this.source.stages.includes(stage)) {
      throw new NotFound(`no stage named ${stage}; the stages are: ${this.source.stages.join(", ")}`);
    }
    const look = this.source.look(stage);
    const known = this.db.prepare("SELECT * FROM parts WHERE stage = ?").all(stage) as PartRow[];
    const now = new Map(look.parts.filter(existsSync).map((p) => [p, statSync(p)]));
    const replaced = known.some((k) => {
      const st = now.get(k.file);
      return !st || st.ino !== k.ino || st.size < k.bytes;
    });
    if (replaced) this.forget(stage);
    const from = new Map(replaced ? [] : known.map((k) => [k.file, k]));
    let pending = 0;
    for (const [file, st] of now) pending += Math.max(0, st.size - (from.get(file)?.bytes ?? 0));
    if (pending > 0) onIndex?.(pending);
    for (const [file, st] of now) {
      const at = from.get(file);
      if ((at?.bytes ?? 0) < st.size) this.indexPart(stage, file, st.ino, at);
    }
    return look;
  }

  private forget(stage: string): void {
    this.db.transaction(() => {
      for (const table of TABLES) this.db.prepare(`DELETE FROM ${table} WHERE stage = ?`).run(stage);
    })();
    this.changed(stage);
  }

  private changed(stage: string): void {
    for (const kind of ["o", "r"]) this.totals.delete(`${stage}\n${kind}`);
    this.searched = undefined;
  }

  private indexPart(stage: string, file: string, ino: number, known?: { part: number; bytes: number }): void {
    const scope = basename(dirname(dirname(file)));
    const seen = this.db.prepare("INSERT OR IGNORE INTO entries (stage, scope, s) VALUES (?, ?, ?)");
    const tag = this.db.prepare("INSERT INTO tags (stage, kind, field, value, n) VALUES (?, ?, ?, ?, ?)");
    const insert = this.db.prepare(
      `INSERT INTO rows (stage, kind, id, method, lang, verdict, reason, gates, source, hash, part, offset, length, item)
       VALUES (@stage, @kind, @id, @method, @lang, @verdict, @reason, @gates, @source, @hash, @part, @offset, @length, @item)`,
    );
    this.db.transaction(() => {
      const part =
        known?.part ??
        Number(
          this.db
            .prepare("INSERT INTO parts (stage, file, ino, bytes) VALUES (?, ?, ?, 0)")
            .run(stage, file, ino).lastInsertRowid,
        );
      const end = scanLines(file, known?.bytes ?? 0, Number.POSITIVE_INFINITY, (line, offset) => {
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
        const add = (
          kind: Kind,
          id: string,
          record: Record<string, unknown> | undefined,
          item: number,
          reason: string | null,
          hashed: unknown,
        ) => {
          const { gates, sources, origins, ...fields } = fieldsOf(record, id, reason);
          const n = insert.run({
            ...fields,
            stage,
            kind,
            id,
            gates: gates.join(",") || null,
            source: sources.join(",") || null,
            hash: contentHash(hashed),
            part,
            offset,
            length: line.length,
            item,
          }).lastInsertRowid;
          for (const [field, values] of [
            ["g", gates],
            ["s", sources],
            ["o", origins],
          ] as const)
            for (const value of values) tag.run(stage, kind, field, value, n);
        };
        for (const [item, record] of (entry.o ?? []).entries())
          add("o", record.id, record, item, null, record);
        for (const [item, reject] of (entry.r ?? []).entries()) {
          const copy = reject.record as Record<string, unknown> | undefined;
          add("r", reject.id, copy, item, reject.reason, copy ?? reject);
        }
      });
      this.db.prepare("UPDATE parts SET bytes = ? WHERE part = ?").run(end, part);
    })();
    this.changed(stage);
  }

  private where(stage: string, kind: Kind, filter: Filter): { sql: string; params: unknown[] } {
    const clauses = ["stage = ?", "kind = ?"];
    const params: unknown[] = [stage, kind];
    for (const key of COLUMNS) {
      const value = filter[key];
      if (value === undefined || value === "") continue;
      if (value === "(none)") clauses.push(`${key} IS NULL`);
      else {
        clauses.push(`${key} = ?`);
        params.push(value);
      }
    }
    for (const [key, field] of TAGS) {
      const value = filter[key];
      if (!value) continue;
      clauses.push("n IN (SELECT n FROM tags WHERE field = ? AND value = ? AND stage = ? AND kind = ?)");
      params.push(field, value, stage, kind);
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
    const key = `${stage}\n${kind}`;
    if (!this.totals.has(key)) {
      const count = this.db
        .prepare("SELECT COUNT(*) AS c FROM rows WHERE stage = ? AND kind = ?")
        .get(stage, kind);
      this.totals.set(key, (count as { c: number }).c);
    }
    const total = this.totals.get(key)!;
    let { sql, params } = this.where(stage, kind, filter);
    if (filter.text) {
      this.searchText(stage, kind, filter.text);
      sql += " AND n IN (SELECT n FROM temp.hits)";
    }
    const filtered =
      sql === "stage = ? AND kind = ?"
        ? total
        : (this.db.prepare(`SELECT COUNT(*) AS c FROM rows WHERE ${sql}`).get(...params) as { c: number }).c;
    const sort =
      options.sort && SORTS.includes(options.sort) && options.sort !== "position" ? options.sort : "n";
    const size = Math.min(Math.max(1, Math.floor(options.size ?? 50)), 500);
    const page = Math.max(0, Math.floor(options.page ?? 0));
    const rows = this.db
      .prepare(`SELECT ${ROW} FROM rows WHERE ${sql} ORDER BY ${sort}, n LIMIT ? OFFSET ?`)
      .all(...params, size, page * size) as Row[];
    return { total, filtered, rows };
  }

  /** Fills `temp.hits` with the rows of `stage` whose record holds `text` (any case). */
  private searchText(stage: string, kind: Kind, text: string): void {
    const parts = this.db
      .prepare("SELECT * FROM parts WHERE stage = ? ORDER BY part")
      .all(stage) as PartRow[];
    // paging through one search's results reads the stage once
    const key = JSON.stringify([stage, kind, text]);
    if (key === this.searched) return;
    this.db.exec("CREATE TEMP TABLE IF NOT EXISTS hits (n INTEGER PRIMARY KEY); DELETE FROM temp.hits;");
    const hits: number[] = [];
    const rowsOf = this.db.prepare(
      "SELECT n, offset, item FROM rows WHERE stage = ? AND kind = ? AND part = ?",
    );
    for (const { part, file, bytes } of parts) {
      const found = linesHolding(file, bytes, kind, text);
      if (found.size === 0) continue;
      for (const row of rowsOf.iterate(stage, kind, part) as Iterable<{
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
    const count = (rows: { v: string | null; c: number }[]) =>
      Object.fromEntries(rows.map(({ v, c }) => [v ?? "(none)", c]));
    for (const field of COLUMNS) {
      result[field] = count(
        this.db
          .prepare(
            `SELECT ${field} AS v, COUNT(*) AS c FROM rows WHERE stage = ? AND kind = ? GROUP BY ${field}`,
          )
          .all(stage, kind) as { v: string | null; c: number }[],
      );
    }
    for (const [name, field] of TAGS) {
      result[name] = count(
        this.db
          .prepare(
            "SELECT value AS v, COUNT(*) AS c FROM tags WHERE field = ? AND stage = ? AND kind = ? GROUP BY value",
          )
          .all(field, stage, kind) as { v: string; c: number }[],
      );
    }
    return result;
  }

  /** Where `id` is, in every stage indexed so far: its rows, by stage order. */
  find(id: string): Row[] {
    return this.db.prepare(`SELECT ${ROW} FROM rows WHERE id = ? ORDER BY n`).all(id) as Row[];
  }

  /** The rows made from `id` (records whose `sources` name it). */
  madeFrom(id: string, limit = 20): Row[] {
    return this.db
      .prepare(
        `SELECT ${ROW} FROM tags JOIN rows USING (n, stage, kind)
         WHERE field = 'o' AND value = ? ORDER BY n LIMIT ?`,
      )
      .all(id, limit) as Row[];
  }

  /** The record (or reject) `id` of `stage`, read by its offset; undefined when the stage has none. */
  read(stage: string, kind: Kind, id: string): { row: Row; record: PipelineRecord | Reject } | undefined {
    const found = this.db
      .prepare(
        `SELECT ${ROW}, file, offset, length, item FROM rows JOIN parts USING (part, stage)
         WHERE id = ? AND stage = ? AND kind = ? ORDER BY n LIMIT 1`,
      )
      .get(id, stage, kind) as
      | (Row & { file: string; offset: number; length: number; item: number })
      | undefined;
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
