// Parquet (the hub's conversions, TACO, benchmark sets), read one row group at a time so memory is
// bounded by a row group, not the file. Compressed with any codec hyparquet-compressors knows.
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects } from "hyparquet";
import { compressors } from "hyparquet-compressors";
import { tooLarge } from "./decode.js";
import type { RawRow, RowReadOptions } from "./types.js";

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
    const rows = await parquetReadObjects({ file: buffer, metadata, rowStart, rowEnd, compressors });
    for (let k = 0; k < rows.length; k++) {
      const index = rowStart + k;
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
