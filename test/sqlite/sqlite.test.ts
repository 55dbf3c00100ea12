// Both caches open their files through pipeline/sqlite.ts: these are the settings a `kill -9` and two
// processes sharing a file rely on, and the read-only opener a shard uses for the others' files.
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openSqlite, openSqliteToRead, type SqliteDatabase } from "../../pipeline/sqlite.js";
import { tempDir } from "../support/temp-dir.js";

const SCHEMA = "CREATE TABLE IF NOT EXISTS notes (key TEXT PRIMARY KEY, body TEXT NOT NULL) WITHOUT ROWID";

let dir: string;
const opened: SqliteDatabase[] = [];
const keep = (db: SqliteDatabase) => {
  opened.push(db);
  return db;
};
beforeEach(() => {
  dir = tempDir("sqlite-");
});
afterEach(() => {
  for (const db of opened.splice(0)) if (db.open) db.close();
});

describe("openSqlite", () => {
  it("creates the folder and the schema, in WAL with synchronous=NORMAL and a 15 s busy wait", () => {
    const db = keep(openSqlite(join(dir, "a", "b", "notes.sqlite"), { schema: SCHEMA }));
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(db.pragma("synchronous", { simple: true })).toBe(1);
    expect(db.pragma("busy_timeout", { simple: true })).toBe(15000);
    expect(db.pragma("cache_size", { simple: true })).toBe(-65536);
    expect(db.pragma("locking_mode", { simple: true })).toBe("normal");
    db.prepare("INSERT INTO notes VALUES (?, ?)").run("k", "v");
    expect(db.prepare("SELECT body FROM notes").pluck().get()).toBe("v");
  });

  it("applies the optional settings only when asked", () => {
    const path = join(dir, "notes.sqlite");
    const db = keep(
      openSqlite(path, {
        schema: SCHEMA,
        exclusive: true,
        mmapBytes: 1 << 20,
        autocheckpointPages: 10000,
        journalSizeLimit: 1 << 22,
      }),
    );
    expect(db.pragma("locking_mode", { simple: true })).toBe("exclusive");
    expect(db.pragma("mmap_size", { simple: true })).toBe(1 << 20);
    expect(db.pragma("wal_autocheckpoint", { simple: true })).toBe(10000);
    expect(db.pragma("journal_size_limit", { simple: true })).toBe(1 << 22);
    const plain = keep(openSqlite(join(dir, "plain.sqlite"), { schema: SCHEMA }));
    expect(plain.pragma("wal_autocheckpoint", { simple: true })).toBe(1000);
  });

  it("keeps what an earlier opening wrote (the schema is created only if missing)", () => {
    const path = join(dir, "notes.sqlite");
    const first = openSqlite(path, { schema: SCHEMA });
    first.prepare("INSERT INTO notes VALUES (?, ?)").run("k", "kept");
    first.close();
    const again = keep(openSqlite(path, { schema: SCHEMA }));
    expect(again.prepare("SELECT body FROM notes WHERE key = 'k'").pluck().get()).toBe("kept");
  });

  it("closes the file and throws when the schema cannot be made", () => {
    expect(() => openSqlite(join(dir, "bad.sqlite"), { schema: "CREATE TABLE (" })).toThrow();
  });
});

describe("openSqliteToRead", () => {
  it("reads an existing file and refuses to write to it", () => {
    const path = join(dir, "notes.sqlite");
    const writer = keep(openSqlite(path, { schema: SCHEMA }));
    writer.prepare("INSERT INTO notes VALUES (?, ?)").run("k", "v");
    const reader = keep(openSqliteToRead(path)!);
    expect(reader.prepare("SELECT body FROM notes").pluck().get()).toBe("v");
    expect(reader.pragma("busy_timeout", { simple: true })).toBe(0);
    expect(() => reader.prepare("INSERT INTO notes VALUES ('x', 'y')").run()).toThrow(/readonly/);
  });

  it("gives nothing for a file that is not there, and never creates it", () => {
    expect(openSqliteToRead(join(dir, "missing.sqlite"))).toBeUndefined();
    expect(existsSync(join(dir, "missing.sqlite"))).toBe(false);
  });

  it("opens a file that is not a database without reading it; the first read fails", () => {
    const path = join(dir, "junk.sqlite");
    writeFileSync(path, "not a database, only some text that is long enough to have a header\n".repeat(4));
    const db = keep(openSqliteToRead(path)!);
    expect(() => db.prepare("SELECT 1 FROM notes")).toThrow(/not a database/);
  });
});
