// Rows of a source file, whatever its format: chosen by the file name (or forced per source), with
// `.gz` files decompressed on the fly. Every reader streams; none holds a whole file.
import { createReadStream } from "node:fs";
import { open } from "node:fs/promises";
import { createGunzip } from "node:zlib";
import { UserError } from "../errors.js";
import { readJsonArray } from "./json-array.js";
import { readJsonLines } from "./jsonl.js";
import { readParquet } from "./parquet.js";
import type { RawRow, RowReadOptions } from "./types.js";

export type { RawRow, RowError, RowErrorReason, RowReadOptions } from "./types.js";

export const FILE_FORMATS = ["jsonl", "json", "parquet"] as const;
export type FileFormat = (typeof FILE_FORMATS)[number];

const CHUNK_BYTES = 1 << 20;

/** The format a file name says, or undefined when it says none we read. */
export function formatOfName(name: string): FileFormat | undefined {
  const base = name.toLowerCase().replace(/\.gz$/, "");
  if (base.endsWith(".jsonl") || base.endsWith(".ndjson")) return "jsonl";
  if (base.endsWith(".json")) return "json";
  if (base.endsWith(".parquet")) return "parquet";
  return undefined;
}

/**
 * The bytes of a plain file, read into one buffer over and over: each chunk holds until the next is
 * asked for, and the JSON readers copy what they keep across chunks (a fresh megabyte per read cost
 * more than the reading). A `.gz` file is gunzipped into fresh chunks.
 */
async function* chunksOf(file: string): AsyncGenerator<Buffer> {
  if (file.toLowerCase().endsWith(".gz")) {
    yield* createReadStream(file, { highWaterMark: CHUNK_BYTES }).pipe(
      createGunzip({ chunkSize: CHUNK_BYTES }),
    );
    return;
  }
  const handle = await open(file, "r");
  try {
    const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, null);
      if (bytesRead === 0) return;
      yield buffer.subarray(0, bytesRead);
    }
  } finally {
    await handle.close();
  }
}

/** First non-space byte of a plain file: `[` means an array even when the name says .jsonl, and back. */
async function firstByte(file: string): Promise<number | undefined> {
  const handle = await open(file, "r");
  try {
    const buffer = Buffer.alloc(4096);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    for (let i = 0; i < bytesRead; i++) {
      const c = buffer[i]!;
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09 && c !== 0xef && c !== 0xbb && c !== 0xbf)
        return c;
    }
    return undefined;
  } finally {
    await handle.close();
  }
}

/**
 * Streams the rows of `file`. `.json` files that turn out to hold one object per line (as some hub
 * datasets do) are read as JSON Lines, and `.jsonl` files holding one array as an array.
 */
export async function* readRows(
  file: string,
  options: RowReadOptions & { format?: FileFormat | undefined },
): AsyncGenerator<RawRow> {
  let format = options.format ?? formatOfName(file);
  if (format === undefined) {
    throw new UserError(
      `cannot tell the format of ${file} from its name; set \`format\` (one of ${FILE_FORMATS.join(", ")}) on its source`,
    );
  }
  if (format === "parquet") {
    yield* readParquet(file, options);
    return;
  }
  if (!file.toLowerCase().endsWith(".gz")) {
    const first = await firstByte(file);
    if (first === 0x5b) format = "json";
    else if (first === 0x7b) format = "jsonl";
  }
  if (format === "json") yield* readJsonArray(chunksOf(file), { ...options, file });
  else yield* readJsonLines(chunksOf(file), options);
}
