// People's verdicts on records (`<data_dir>/review/marks.sqlite`): every mark is kept, none is ever
// overwritten, so two tabs or two reviewers marking at once lose nothing; a reviewer's verdict on an
// id is their latest mark. Each mark holds the record's content hash, so a mark on content that has
// since changed shows as stale. Export reads the bad ones; the review app and CLI write them.
import { hash } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { openSqlite, openSqliteToRead, type SqliteDatabase } from "../sqlite.js";

export const MARKS_FILE = join("review", "marks.sqlite");

export type Verdict = "good" | "bad";

/** Why a record is bad, besides the paper's ten feedback categories (which the CLI adds). */
export const REVIEW_REASONS = ["wrong-language", "wrong-execution-claim", "not-code", "other"] as const;

export interface MarkInput {
  /** the stage the record was judged in */
  stage: string;
  id: string;
  verdict: Verdict;
  reason?: string | undefined;
  note?: string | undefined;
  reviewer: string;
  /** `contentHash` of the record as the reviewer saw it */
  hash: string;
}

export interface Mark extends MarkInput {
  /** order of writing: the latest of a reviewer's marks on an id is their verdict */
  seq: number;
  /** ISO time it was made */
  at: string;
}

const SCHEMA = `CREATE TABLE IF NOT EXISTS marks (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  stage TEXT NOT NULL,
  id TEXT NOT NULL,
  verdict TEXT NOT NULL CHECK (verdict IN ('good', 'bad')),
  reason TEXT,
  note TEXT,
  reviewer TEXT NOT NULL,
  at TEXT NOT NULL,
  hash TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS marks_by_id ON marks (id, reviewer, seq);`;

/**
 * What a mark is about: a dialogue's messages (the same in every stage that carries it, whatever
 * meta a later stage adds), else the whole record. The first 16 hex digits of its SHA-256.
 */
export function contentHash(record: unknown): string {
  const messages = (record as { messages?: unknown } | null)?.messages;
  return hash("sha256", JSON.stringify(messages ?? record)).slice(0, 16);
}

type Row = Omit<Mark, "reason" | "note"> & { reason: string | null; note: string | null };

const toMark = (row: Row): Mark => ({
  seq: row.seq,
  stage: row.stage,
  id: row.id,
  verdict: row.verdict,
  ...(row.reason !== null ? { reason: row.reason } : {}),
  ...(row.note !== null ? { note: row.note } : {}),
  reviewer: row.reviewer,
  at: row.at,
  hash: row.hash,
});

const LATEST = `SELECT m.* FROM marks m
  JOIN (SELECT id, reviewer, MAX(seq) AS seq FROM marks GROUP BY id, reviewer) l ON m.seq = l.seq`;

export class MarksStore {
  private constructor(private readonly db: SqliteDatabase) {}

  /** Opens (making it if need be) the data dir's marks to write. */
  static open(dataDir: string): MarksStore {
    return new MarksStore(openSqlite(join(dataDir, MARKS_FILE), { schema: SCHEMA }));
  }

  /** The data dir's marks to read, or undefined when nobody has marked anything there. */
  static read(dataDir: string): MarksStore | undefined {
    const path = join(dataDir, MARKS_FILE);
    if (!existsSync(path)) return undefined;
    const db = openSqliteToRead(path);
    return db ? new MarksStore(db) : undefined;
  }

  add(input: MarkInput): Mark {
    const at = new Date().toISOString();
    const info = this.db
      .prepare(
        "INSERT INTO marks (stage, id, verdict, reason, note, reviewer, at, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      )
      .run(
        input.stage,
        input.id,
        input.verdict,
        input.reason ?? null,
        input.note ?? null,
        input.reviewer,
        at,
        input.hash,
      );
    return { ...input, seq: Number(info.lastInsertRowid), at };
  }

  /** Every mark ever made on `id`, oldest first. */
  history(id: string): Mark[] {
    return (this.db.prepare("SELECT * FROM marks WHERE id = ? ORDER BY seq").all(id) as Row[]).map(toMark);
  }

  /** Each reviewer's verdict on each id (their latest mark), by id then reviewer. */
  current(): Mark[] {
    return (this.db.prepare(`${LATEST} ORDER BY m.id, m.reviewer`).all() as Row[]).map(toMark);
  }

  /** Every mark, oldest first. */
  *all(): Generator<Mark> {
    for (const row of this.db.prepare("SELECT * FROM marks ORDER BY seq").iterate() as Iterable<Row>)
      yield toMark(row);
  }

  close(): void {
    this.db.close();
  }
}

/** A digest of every reviewer's verdicts, to tell when they changed; undefined without any. */
export function verdictsDigest(dataDir: string): string | undefined {
  const store = MarksStore.read(dataDir);
  if (!store) return undefined;
  try {
    const verdicts = store.current().map((m) => [m.id, m.reviewer, m.verdict, m.reason ?? "", m.hash]);
    return verdicts.length > 0 ? hash("sha256", JSON.stringify(verdicts)).slice(0, 16) : undefined;
  } finally {
    store.close();
  }
}
