// JSON Lines, streamed: a line at a time, never more than one line (capped at maxRowBytes) in memory.
// A chunk holds only until the next one is asked for: a line that goes on into the next is copied.
import { decodeJsonRow, tooLarge } from "./decode.js";
import { PREFIX_BYTES, type RawRow, type RowReadOptions } from "./types.js";

const NEWLINE = 0x0a;

function isBlank(bytes: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = bytes[i]!;
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d) return false;
  }
  return true;
}

export async function* readJsonLines(
  chunks: AsyncIterable<Buffer>,
  options: RowReadOptions,
): AsyncGenerator<RawRow> {
  const max = options.maxRowBytes;
  let pieces: Buffer[] = [];
  let pending = 0; // bytes of the current line seen so far (also while skipping)
  let skipping = false; // the current line is over the limit: count it, keep only its prefix
  let prefix = "";
  let index = 0;

  /**
   * The row a line ends (`line` undefined: an oversized one), undefined when it is blank: a row is a
   * line that is not blank, however it parses.
   */
  function finish(line: Buffer | undefined): RawRow | undefined {
    let row: RawRow | undefined;
    if (skipping || !isBlank(line!, 0, line!.length))
      row = skipping ? tooLarge(index++, pending, max, prefix) : decodeJsonRow(line!, index++);
    pieces = [];
    pending = 0;
    skipping = false;
    return row;
  }

  for await (const chunk of chunks) {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(NEWLINE, start);
      const end = nl === -1 ? chunk.length : nl;
      if (!skipping) {
        if (pending + end - start > max) {
          skipping = true;
          const head = Buffer.concat([...pieces, chunk.subarray(start, Math.min(end, start + PREFIX_BYTES))]);
          prefix = head.subarray(0, PREFIX_BYTES).toString("utf8");
          pieces = [];
        } else if (nl !== -1 && pieces.length === 0) {
          // a whole line in this chunk (the common case): decoded where it lies, never copied
          if (!isBlank(chunk, start, end)) yield decodeJsonRow(chunk.subarray(start, end), index++);
          start = nl + 1;
          continue;
        } else if (end > start) {
          // copied: the chunk's buffer may be read into again before the line ends
          pieces.push(Buffer.from(chunk.subarray(start, end)));
        }
      }
      pending += end - start;
      if (nl === -1) break;
      const row = finish(skipping ? undefined : Buffer.concat(pieces));
      if (row) yield row;
      start = nl + 1;
    }
  }
  if (skipping || pieces.length > 0) {
    const last = finish(skipping ? undefined : Buffer.concat(pieces));
    if (last) yield last;
  }
}
