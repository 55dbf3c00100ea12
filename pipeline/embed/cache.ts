// The embedding cache: every vector computed is kept on disk, keyed by the embedder's model identity
// and a hash of the text, so a rerun or a resumed run never computes one twice. Each batch is one
// transaction, committed before its vectors are used: a `kill -9` loses at most the batch in flight.
// Opened like the LLM response cache, with the same durability (pipeline/sqlite.ts).
import { hash } from "node:crypto";
import { inCache } from "../errors.js";
import { openSqlite, type SqliteDatabase, type SqliteStatement } from "../sqlite.js";

// Bump when the key's recipe changes, so old entries are simply never found again.
const KEY_VERSION = 1;
const SETTING = "stages.pack.cache.path";

export function embeddingKey(model: string, text: string): Buffer {
  return hash("sha256", `${KEY_VERSION}|${model.length}:${model}|${text}`, "buffer") as unknown as Buffer;
}

export interface CachedEmbedding {
  /** L2-normalised */
  vector: Float32Array;
  tokens: number | undefined;
  truncated: boolean;
}

interface Row {
  vector: Buffer;
  tokens: number | null;
  truncated: number;
}

export class EmbeddingCache {
  readonly path: string;
  private readonly db: SqliteDatabase;
  private readonly selectOne: SqliteStatement<[Buffer], Row>;
  private readonly insertMany: (rows: { key: Buffer; model: string; value: CachedEmbedding }[]) => void;

  constructor(path: string) {
    this.path = path;
    try {
      this.db = openSqlite(path, {
        schema: `CREATE TABLE IF NOT EXISTS embeddings (
        key BLOB PRIMARY KEY,
        model TEXT NOT NULL,
        dim INTEGER NOT NULL,
        vector BLOB NOT NULL,
        tokens INTEGER,
        truncated INTEGER NOT NULL
      ) WITHOUT ROWID`,
      });
    } catch (error) {
      throw inCache(error, path, SETTING);
    }
    this.selectOne = this.db.prepare("SELECT vector, tokens, truncated FROM embeddings WHERE key = ?");
    const insert = this.db.prepare("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?, ?, ?)");
    this.insertMany = this.db.transaction((rows) => {
      for (const { key, model, value } of rows) {
        const v = value.vector;
        insert.run(
          key,
          model,
          v.length,
          Buffer.from(v.buffer, v.byteOffset, v.byteLength),
          value.tokens ?? null,
          value.truncated ? 1 : 0,
        );
      }
    });
  }

  get(key: Buffer): CachedEmbedding | undefined {
    const row = this.selectOne.get(key);
    if (!row) return undefined;
    // copy out of SQLite's buffer, aligned for Float32Array
    const bytes = new Uint8Array(row.vector);
    return {
      vector: new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4),
      tokens: row.tokens ?? undefined,
      truncated: row.truncated === 1,
    };
  }

  /** Commits a batch in one transaction; durable against a killed process once this returns. */
  putMany(rows: { key: Buffer; model: string; value: CachedEmbedding }[]): void {
    try {
      if (rows.length > 0) this.insertMany(rows);
    } catch (error) {
      throw inCache(error, this.path, SETTING);
    }
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
