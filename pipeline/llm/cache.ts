// The persistent response cache: nothing already answered is ever sent again. An answer is
// committed (SQLite, WAL: pipeline/sqlite.ts says why that survives a kill) before `chat` returns it,
// so by the time a stage commits the record the answer is on disk: a `kill -9` anywhere loses at
// most the requests still in flight.
import { hash } from "node:crypto";
import { existsSync, readdirSync } from "node:fs";
import { basename, dirname, extname, join } from "node:path";
import { inCache } from "../errors.js";
import { openSqlite, openSqliteToRead, type SqliteDatabase, type SqliteStatement } from "../sqlite.js";
import type { Sampling } from "./config.js";
import type { ChatMessage, ChatResult } from "./types.js";

export interface CachedAnswer {
  content: string;
  model: string;
  finishReason: string | null;
  promptTokens: number;
  completionTokens: number;
}

export function toChatResult(answer: CachedAnswer, cached: boolean): ChatResult {
  return {
    content: answer.content,
    cached,
    model: answer.model,
    finishReason: answer.finishReason,
    usage: { promptTokens: answer.promptTokens, completionTokens: answer.completionTokens },
  };
}

// Bump when the key's recipe changes, so old entries are simply never found again.
const KEY_VERSION = 1;

/**
 * The cache key: a SHA-256 of the model, the messages, the sampling parameters and the answer's
 * constraint if any. Neither the base URL nor the key is part of it: the same model answers the
 * same way wherever it is served.
 */
export function cacheKey(
  model: string,
  messages: readonly ChatMessage[],
  sampling: Sampling,
  /** a structured-output constraint the provider honours (structured.ts); absent keys are unchanged */
  constraint?: string,
): Buffer {
  // Length-prefixed fields: unambiguous whatever the texts contain, and cheaper than JSON (the key
  // is computed for every request, cached or not).
  let canonical = `${KEY_VERSION}|${model.length}:${model}|`;
  for (const m of messages) canonical += `${m.role}:${m.content.length}:${m.content}|`;
  for (const name of Object.keys(sampling).sort()) {
    const value = sampling[name as keyof Sampling];
    if (value !== undefined) canonical += `${name}=${JSON.stringify(value)}|`;
  }
  if (constraint !== undefined) canonical += `constraint:${constraint.length}:${constraint}|`;
  return hash("sha256", canonical, "buffer") as unknown as Buffer;
}

const SELECT =
  "SELECT model, content, finish_reason AS finishReason, prompt_tokens AS promptTokens, " +
  "completion_tokens AS completionTokens FROM responses WHERE key = ?";

interface QueuedAnswer {
  key: Buffer;
  answer: CachedAnswer;
  resolve: () => void;
  reject: (error: Error) => void;
}

export interface ResponseCacheOptions {
  /**
   * Other cache files to look answers up in when this one has none, opened read-only: a shard's
   * cache reads the one-process cache and the files of shards of another count (see
   * `openResponseCache`). One that cannot be read (a live shard holds it) counts as a miss.
   */
  readAlso?: string[];
  /**
   * A file only this process ever opens (a shard's own file on shared storage): SQLite's exclusive
   * locking mode keeps the WAL index in memory instead of a shared-memory file, which network
   * filesystems cannot share.
   */
  exclusive?: boolean;
}

export class ResponseCache {
  readonly path: string;
  private readonly db: SqliteDatabase;
  private readonly others: { db: SqliteDatabase; select: SqliteStatement<[Buffer], CachedAnswer> }[] = [];
  private readonly selectOne: SqliteStatement<[Buffer], CachedAnswer>;
  private readonly selectHas: SqliteStatement<[Buffer], { one: number }>;
  private readonly upsert: SqliteStatement<[Buffer, string, string, string | null, number, number, number]>;

  private queued: QueuedAnswer[] = [];
  private readonly putMany: (batch: QueuedAnswer[]) => void;

  constructor(path: string, options: ResponseCacheOptions = {}) {
    this.path = path;
    this.db = openSqlite(path, {
      schema: `CREATE TABLE IF NOT EXISTS responses (
      key BLOB PRIMARY KEY,
      model TEXT NOT NULL,
      content TEXT NOT NULL,
      finish_reason TEXT,
      prompt_tokens INTEGER NOT NULL,
      completion_tokens INTEGER NOT NULL,
      created_at INTEGER NOT NULL
    ) WITHOUT ROWID`,
      exclusive: options.exclusive === true,
      // Reruns read every answer back: map the file.
      mmapBytes: 1073741824,
      // Checkpoint (and fsync) every ~40 MB of answers rather than every 4 MB: fewer stalls of the
      // event loop while a thousand answers a second arrive; the WAL is cut back after each one.
      autocheckpointPages: 10000,
      journalSizeLimit: 67108864,
    });
    this.selectOne = this.db.prepare(SELECT);
    this.selectHas = this.db.prepare("SELECT 1 AS one FROM responses WHERE key = ?");
    this.putMany = this.db.transaction((batch: QueuedAnswer[]) => {
      for (const { key, answer } of batch) this.put(key, answer);
    });
    this.upsert = this.db.prepare("INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?, ?)");
    for (const other of options.readAlso ?? []) this.openReadOnly(other);
  }

  private openReadOnly(path: string): void {
    const db = openSqliteToRead(path);
    if (!db) return;
    try {
      const select = db.prepare<[Buffer], CachedAnswer>(SELECT);
      this.others.push({ db, select });
    } catch {
      // held exclusively by a live shard, or not a cache yet: it simply answers nothing
      db.close();
    }
  }

  get(key: Buffer): CachedAnswer | undefined {
    const row = this.selectOne.get(key);
    if (row) return row;
    for (const other of this.others) {
      try {
        const found = other.select.get(key);
        if (found) return found;
      } catch {
        // busy: a shard that is running holds it; its answers are its own records' anyway
      }
    }
    return undefined;
  }

  has(key: Buffer): boolean {
    return this.selectHas.get(key) !== undefined || (this.others.length > 0 && this.get(key) !== undefined);
  }

  /** Durable against a killed process once this returns (see the note at the top). */
  put(key: Buffer, answer: CachedAnswer): void {
    this.upsert.run(
      key,
      answer.model,
      answer.content,
      answer.finishReason,
      answer.promptTokens,
      answer.completionTokens,
      Date.now(),
    );
  }

  /**
   * Queues the answer and resolves once it is committed: every answer that arrives in the same turn
   * of the event loop goes into one transaction (one WAL commit instead of one each).
   */
  putSoon(key: Buffer, answer: CachedAnswer): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queued.push({ key, answer, resolve, reject });
      if (this.queued.length === 1) setImmediate(() => this.flush());
    });
  }

  /** Commits what `putSoon` queued. */
  flush(): void {
    const batch = this.queued;
    if (batch.length === 0) return;
    this.queued = [];
    try {
      this.putMany(batch);
    } catch (error) {
      for (const item of batch) item.reject(inCache(error, this.path, "llm.cache.path") as Error);
      return;
    }
    for (const item of batch) item.resolve();
  }

  count(): number {
    return (this.db.prepare("SELECT count(*) AS n FROM responses").get() as { n: number }).n;
  }

  close(): void {
    this.flush();
    if (this.db.open) this.db.close();
    for (const other of this.others.splice(0)) if (other.db.open) other.db.close();
  }
}

/** The shard of a run, as far as the cache cares (pipeline/runner/shard.ts has the rest). */
export interface CacheShard {
  index: number;
  count: number;
}

/** `<dir>/llm-cache.shards/K-of-N.sqlite` for the cache at `<dir>/llm-cache.sqlite`. */
export function shardCachePath(path: string, shard: CacheShard): string {
  const ext = extname(path);
  return join(shardCacheDir(path), `${shard.index}-of-${shard.count}${ext}`);
}

function shardCacheDir(path: string): string {
  const ext = extname(path);
  return join(dirname(path), `${basename(path, ext)}.shards`);
}

/**
 * The response cache of a run. A one-process run writes `path`; shard K of N writes a file of its
 * own next to it (SQLite's WAL needs shared memory that NFS and Lustre cannot give two machines, so
 * no two machines ever write one file). Both also read the files whose answers could be theirs: a
 * shard reads the one-process cache and the files of shards of another N (the same N's other shards
 * hold other records' answers); a one-process run reads every shard's file. So an answer is paid for
 * once whichever way the stage is later rerun.
 */
export function openResponseCache(path: string, shard?: CacheShard): ResponseCache {
  const own = shard ? shardCachePath(path, shard) : path;
  const readAlso: string[] = [];
  if (shard && existsSync(path)) readAlso.push(path);
  const dir = shardCacheDir(path);
  if (existsSync(dir)) {
    const ext = extname(path);
    for (const name of readdirSync(dir).sort()) {
      const match = /^(\d+)-of-(\d+)(.*)$/.exec(name);
      if (!match || match[3] !== ext) continue;
      if (shard && Number(match[2]) === shard.count) continue;
      readAlso.push(join(dir, name));
    }
  }
  try {
    return new ResponseCache(own, { readAlso, ...(shard ? { exclusive: true } : {}) });
  } catch (error) {
    throw inCache(error, own, "llm.cache.path");
  }
}
