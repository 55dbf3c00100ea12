// What a reader yields: one raw row of a source file, parsed, or the reason it could not be. A bad row
// never stops a read: the stage turns it into a reject and goes on with the next one.

export type RowErrorReason = "malformed-json" | "invalid-utf8" | "row-too-large";

export interface RowError {
  reason: RowErrorReason;
  detail: string;
  /** the first bytes of the row, for the reject (never the whole of a huge row) */
  prefix: string;
}

export type RawRow =
  /** `index`: 0-based position of the row in its file (non-blank lines, array elements, table rows) */
  | { index: number; value: unknown; error?: undefined }
  | { index: number; value?: undefined; error: RowError };

export interface RowReadOptions {
  /** a row longer than this (in bytes of the file) becomes a `row-too-large` error, without being held */
  maxRowBytes: number;
}

/** How much of a bad row a reject keeps. */
export const PREFIX_BYTES = 200;

export function prefixOf(bytes: Buffer): string {
  return bytes.subarray(0, PREFIX_BYTES).toString("utf8");
}
