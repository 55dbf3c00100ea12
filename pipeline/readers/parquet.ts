// Parquet (the hub's conversions, TACO, benchmark sets), read one row group at a time so memory is
// bounded by a row group, not the file. Compressed with any codec hyparquet-compressors knows.
// Strings are decoded strictly: a row with a string that is not valid UTF-8 is rejected like a JSONL
// line with broken bytes, not silently repaired with U+FFFD.
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects } from "hyparquet";
import { compressors } from "hyparquet-compressors";
import { tooLarge } from "./decode.js";
import { PREFIX_BYTES, type RawRow, type RowReadOptions } from "./types.js";

/** A string column's value whose bytes are not UTF-8: kept (lossily decoded) only to report it. */
class BrokenText {
  constructor(readonly lossy: string) {}
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });
const lossyUtf8 = new TextDecoder("utf-8");
const parsers = {
  stringFromBytes(bytes: Uint8Array | undefined): string | BrokenText | undefined {
    if (!bytes) return bytes;
    try {
      return strictUtf8.decode(bytes);
    } catch {
      return new BrokenText(lossyUtf8.decode(bytes));
    }
  },
};

/** The path of the first broken string in a decoded row (`answer`, `tags[2]`), if there is one. */
function brokenPath(value: unknown, path: string): string | undefined {
  if (value instanceof BrokenText) return path || "(value)";
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = brokenPath(value[i], `${path}[${i}]`);
      if (found) return found;
    }
  } else if (value !== null && typeof value === "object" && !(value instanceof Uint8Array)) {
    for (const [k, v] of Object.entries(value)) {
      const found = brokenPath(v, path ? `${path}.${k}` : k);
      if (found) return found;
    }
  }
  return undefined;
}

/** Parquet int64 columns decode to BigInt, which JSON cannot hold: small ones become numbers. */
function jsonSafe(value: unknown): unknown {
  if (typeof value === "bigint") {
    return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER)
      ? Number(value)
      : value.toString();
  }
  if (Array.isArray(value)) return value.map(jsonSafe);
  if (value instanceof Uint8Array) return Buffer.from(value).toString("base64");
  if (value instanceof Date) return value.toISOString();
  if (value instanceof BrokenText) return value.lossy;
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = jsonSafe(v);
    return out;
  }
  return value;
}

/** Rough size of a decoded row in bytes, for the max_row_bytes rule. */
function approximateBytes(value: unknown): number {
  if (typeof value === "string") return value.length;
  if (Array.isArray(value)) return value.reduce((sum: number, v) => sum + approximateBytes(v), 0);
  if (value !== null && typeof value === "object") {
    let sum = 0;
    for (const v of Object.values(value)) sum += approximateBytes(v);
    return sum;
  }
  return 8;
}

export async function* readParquet(file: string, options: RowReadOptions): AsyncGenerator<RawRow> {
  const buffer = await asyncBufferFromFile(file);
  const metadata = await parquetMetadataAsync(buffer);
  let rowStart = 0;
  for (const group of metadata.row_groups) {
    const rowEnd = rowStart + Number(group.num_rows);
    const rows = await parquetReadObjects({ file: buffer, metadata, rowStart, rowEnd, compressors, parsers });
    for (let k = 0; k < rows.length; k++) {
      const index = rowStart + k;
      const broken = brokenPath(rows[k], "");
      if (broken) {
        yield {
          index,
          error: {
            reason: "invalid-utf8",
            detail: `row ${index}: column ${broken} is not valid UTF-8`,
            prefix: JSON.stringify(jsonSafe(rows[k])).slice(0, PREFIX_BYTES),
          },
        };
        continue;
      }
      const value = jsonSafe(rows[k]);
      const bytes = approximateBytes(value);
      if (bytes > options.maxRowBytes) {
        yield tooLarge(index, bytes, options.maxRowBytes, JSON.stringify(value).slice(0, 200));
      } else {
        yield { index, value };
      }
    }
    rowStart = rowEnd;
  }
}
