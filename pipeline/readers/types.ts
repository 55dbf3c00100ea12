// What a reader yields: one raw row of a source file, parsed, or the reason it could not be. A bad row
// never stops a read: the stage turns it into a reject and goes on with the next one. A caller that
// wants only some rows (a shard) says which: the others are counted, never parsed.

export type RowErrorReason = "malformed-json" | "invalid-utf8" | "row-too-large";

export interface RowError {
  reason: RowErrorReason;
  detail: string;
  /** the first bytes of the row, for the reject (never the whole of a huge row) */
  prefix: string;
}

export type RawRow =
  /** `index`: 0-based position of the row in its file (non-blank lines, array elements, table rows) */
  | { index: number; value: unknown; error?: undefined; skipped?: undefined }
  | { index: number; value?: undefined; error: RowError; skipped?: undefined }
  /** a row the caller did not want: where it is, nothing of what it holds (never an error) */
  | { index: number; value?: undefined; error?: undefined; skipped: true };

export interface RowReadOptions {
  /** a row longer than this (in bytes of the file) becomes a `row-too-large` error, without being held */
  maxRowBytes: number;
  /**
   * Which rows to parse, by index; the others are yielded as `skipped` placeholders. Where rows start
   * and end never depends on parsing, so the indexes are the same whatever this says. Default: all.
   */
  wanted?: ((index: number) => boolean) | undefined;
}

/** A row the caller does not want, in place of what it holds. */
export function skippedRow(index: number): RawRow {
  return { index, skipped: true };
}

/** How much of a bad row a reject keeps. */
export const PREFIX_BYTES = 200;

export function prefixOf(bytes: Buffer): string {
  return bytes.subarray(0, PREFIX_BYTES).toString("utf8");
}
