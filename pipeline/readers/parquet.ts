// Parquet (the hub's conversions, TACO, benchmark sets), read one row group at a time so memory is
// bounded by a row group, not the file. Text is decoded strictly and lazily: a row with a string,
// map key or JSON cell that is not valid UTF-8 or JSON is rejected like a broken JSONL line, not
// repaired with U+FFFD (one bad cell does not stop the file). Byte arrays without a string
// annotation are binary: text when they are valid UTF-8, base64 otherwise.
import { isUtf8 } from "node:buffer";
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects } from "hyparquet";
import { compressors } from "hyparquet-compressors";
import { tooLarge } from "./decode.js";
import { PREFIX_BYTES, type RawRow, type RowErrorReason, type RowReadOptions } from "./types.js";

/** Marks a map key made from a bad cell (hyparquet turns map keys into property names). */
const BAD_KEY = "\u0000bad-cell\u0000";

/** A cell that could not be decoded: kept (lossily) only to report it. */
class BadCell {
  constructor(
    readonly reason: Extract<RowErrorReason, "invalid-utf8" | "malformed-json">,
    readonly lossy: string,
  ) {}
  toString(): string {
    return `${BAD_KEY}${this.reason}\u0000${this.lossy}`;
  }
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });
const lossyUtf8 = new TextDecoder("utf-8");

function strictText(bytes: Uint8Array): string | BadCell {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return new BadCell("invalid-utf8", lossyUtf8.decode(bytes));
  }
}

function strictJson(bytes: Uint8Array): unknown {
  const text = strictText(bytes);
  if (text instanceof BadCell) return text;
  try {
    return JSON.parse(text);
  } catch {
    return new BadCell("malformed-json", text);
  }
}

/** A text or JSON cell's bytes, decoded the first time its row asks (a map key: when it is made). */
class Cell {
  private decoded: unknown;
  private done = false;
  constructor(
    private readonly bytes: Uint8Array,
    private readonly json: boolean,
  ) {}
  /** the text, the parsed JSON, or the BadCell saying why it is neither */
  value(): unknown {
    if (!this.done) {
      this.decoded = this.json ? strictJson(this.bytes) : strictText(this.bytes);
      this.done = true;
    }
    return this.decoded;
  }
  /** hyparquet makes a map's keys property names */
  toString(): string {
    return String(this.value());
  }
}

/** The decoders handed to hyparquet (exported for tests). */
export const parquetParsers = {
  stringFromBytes(bytes: Uint8Array | undefined): Cell | undefined {
    return bytes && new Cell(bytes, false);
  },
  jsonFromBytes(bytes: Uint8Array | undefined): Cell | undefined {
    return bytes && new Cell(bytes, true);
  },
};

const SAYS: Record<BadCell["reason"], string> = {
  "invalid-utf8": "is not valid UTF-8",
  "malformed-json": "is not valid JSON",
};

/** The first bad cell of a decoded row, with its path (`answer`, `tags[2]`, `meta.key`). */
export function badCell(
  value: unknown,
  path: string,
): { path: string; reason: BadCell["reason"] } | undefined {
  if (value instanceof Cell) {
    const decoded = value.value();
    return decoded instanceof BadCell ? { path: path || "(value)", reason: decoded.reason } : undefined;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = badCell(value[i], `${path}[${i}]`);
      if (found) return found;
    }
  } else if (value !== null && typeof value === "object" && !(value instanceof Uint8Array)) {
    for (const [k, v] of Object.entries(value)) {
      if (k.startsWith(BAD_KEY)) {
        const reason = k.slice(BAD_KEY.length, k.indexOf("\u0000", BAD_KEY.length)) as BadCell["reason"];
        return { path: `${path || "(value)"} (a map key)`, reason };
      }
      const found = badCell(v, path ? `${path}.${k}` : k);
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
  if (value instanceof Uint8Array) {
    const bytes = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    return isUtf8(bytes) ? bytes.toString("utf8") : bytes.toString("base64");
  }
  if (value instanceof Date) return value.toISOString();
  if (value instanceof Cell) {
    // copied, as a dictionary's cell is shared by the rows that hold it
    const decoded = value.value();
    return decoded instanceof BadCell ? decoded.lossy : jsonSafe(decoded);
  }
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
    const rows = await parquetReadObjects({
      file: buffer,
      metadata,
      rowStart,
      rowEnd,
      compressors,
      parsers: parquetParsers,
      // byte arrays without a string annotation stay bytes (see jsonSafe)
      utf8: false,
    });
    for (const [i, row] of rows.entries()) {
      const index = rowStart + i;
      const bad = badCell(row, "");
      if (bad) {
        yield {
          index,
          error: {
            reason: bad.reason,
            detail: `row ${index}: column ${bad.path} ${SAYS[bad.reason]}`,
            prefix: JSON.stringify(jsonSafe(row)).slice(0, PREFIX_BYTES),
          },
        };
        continue;
      }
      const value = jsonSafe(row);
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
