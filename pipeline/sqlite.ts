// How the pipeline opens its SQLite files (the LLM response cache, the embedding cache): the same
// durability choices for every one, so a file that survives a `kill -9` in one cache survives it in
// the other.
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";

export type SqliteDatabase = Database.Database;
export type SqliteStatement<Params extends unknown[], Row = unknown> = Database.Statement<Params, Row>;

export interface SqliteOptions {
  /** run once the file is open: `CREATE TABLE IF NOT EXISTS ...` */
  schema: string;
  /**
   * A file only this process ever opens (a shard's own file on shared storage): SQLite's exclusive
   * locking mode keeps the WAL index in memory instead of a shared-memory file, which network
   * filesystems cannot share.
   */
  exclusive?: boolean;
  /** bytes of the file to memory-map, for files read back whole on every rerun */
  mmapBytes?: number;
  /** pages written between checkpoints (SQLite's default is 1000, about 4 MB) */
  autocheckpointPages?: number;
  /** bytes the WAL is cut back to after a checkpoint */
  journalSizeLimit?: number;
}

/** Opens (creating it and its folder if need be) a file several processes may share. */
export function openSqlite(path: string, options: SqliteOptions): SqliteDatabase {
  mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  try {
    if (options.exclusive) db.pragma("locking_mode = EXCLUSIVE");
    db.pragma("journal_mode = WAL");
    // Survives a killed process (the WAL is in the OS page cache) without an fsync per commit; only a
    // power cut may lose the last few commits, which then cost one recomputation each.
    db.pragma("synchronous = NORMAL");
    // Several processes (a run and a `status`, two stages) may share the file.
    db.pragma("busy_timeout = 15000");
    db.pragma("cache_size = -65536");
    if (options.mmapBytes !== undefined) db.pragma(`mmap_size = ${options.mmapBytes}`);
    if (options.autocheckpointPages !== undefined) {
      db.pragma(`wal_autocheckpoint = ${options.autocheckpointPages}`);
    }
    if (options.journalSizeLimit !== undefined) db.pragma(`journal_size_limit = ${options.journalSizeLimit}`);
    db.exec(options.schema);
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}

/**
 * Opens an existing file to read only, never waiting for a writer: undefined when it is missing, not
 * a database, or held exclusively by a live process (a running shard), so the caller treats it as
 * having nothing.
 */
export function openSqliteToRead(path: string): SqliteDatabase | undefined {
  try {
    const db = new Database(path, { readonly: true, fileMustExist: true });
    db.pragma("busy_timeout = 0");
    return db;
  } catch {
    return undefined;
  }
}
