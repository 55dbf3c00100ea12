// What a reader yields: one raw row of a source file, parsed, or the reason it could not be. A bad row
// never stops a read: the stage turns it into a reject and goes on with the next one. A caller that
// wants only some rows (a shard) says which: the others are counted, never parsed, and each run of
// them comes as one placeholder.

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
  /**
   * `skipped` consecutive rows from `index` that the caller did not want: where they are, nothing of
   * what they hold (never an error). A reader yields one for each run of them, when the run ends.
   */
  | { index: number; value?: undefined; error?: undefined; skipped: number };

export interface RowReadOptions {
  /** a row longer than this (in bytes of the file) becomes a `row-too-large` error, without being held */
  maxRowBytes: number;
  /**
   * Which rows to parse, by index, asked once per row in order; the others are yielded as `skipped`
   * placeholders, one per run. Where rows start and end never depends on parsing, so the indexes are
   * the same whatever this says. Default: all.
   */
  wanted?: ((index: number) => boolean) | undefined;
}

/**
 * Gathers a reader's consecutive unwanted rows into one placeholder: `add` each, and before yielding
 * a wanted row (and at the end) yield `take()` when `pending`.
 */
export class SkippedRun {
  private from = 0;
  private count = 0;

  add(index: number): void {
    if (this.count === 0) this.from = index;
    this.count++;
  }

  get pending(): boolean {
    return this.count > 0;
  }

  /** the placeholder for the rows gathered, and a new run */
  take(): RawRow {
    const row: RawRow = { index: this.from, skipped: this.count };
    this.count = 0;
    return row;
  }
}

/** How much of a bad row a reject keeps. */
export const PREFIX_BYTES = 200;

export function prefixOf(bytes: Buffer): string {
  return bytes.subarray(0, PREFIX_BYTES).toString("utf8");
}
