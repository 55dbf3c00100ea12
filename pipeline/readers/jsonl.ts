// JSON Lines, streamed: a line at a time, never more than one line (capped at maxRowBytes) in memory.
// A line the caller does not want is found and counted, not decoded.
import { decodeJsonRow, tooLarge } from "./decode.js";
import { PREFIX_BYTES, type RawRow, type RowReadOptions, skippedRow } from "./types.js";

const NEWLINE = 0x0a;

function isBlank(line: Buffer): boolean {
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d) return false;
  }
  return true;
}

export async function* readJsonLines(
  chunks: AsyncIterable<Buffer>,
  options: RowReadOptions,
): AsyncGenerator<RawRow> {
  const max = options.maxRowBytes;
  const wanted = options.wanted;
  let pieces: Buffer[] = [];
  let pending = 0; // bytes of the current line seen so far (also while skipping)
  let skipping = false; // the current line is over the limit: count it, keep only its prefix
  let prefix = "";
  let index = 0;

  function* finish(line: Buffer | undefined): Generator<RawRow> {
    // a row is a line that is not blank, however it parses; only a wanted one is parsed
    if (skipping) {
      yield wanted === undefined || wanted(index) ? tooLarge(index, pending, max, prefix) : skippedRow(index);
      index++;
    } else if (line !== undefined && !isBlank(line)) {
      yield wanted === undefined || wanted(index) ? decodeJsonRow(line, index) : skippedRow(index);
      index++;
    }
    pieces = [];
    pending = 0;
    skipping = false;
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
          pending += end - start;
          yield* finish(chunk.subarray(start, end));
          start = nl + 1;
          continue;
        } else if (end > start) {
          pieces.push(chunk.subarray(start, end));
        }
      }
      pending += end - start;
      if (nl === -1) break;
      yield* finish(skipping ? undefined : Buffer.concat(pieces));
      start = nl + 1;
    }
  }
  if (skipping || pieces.length > 0) yield* finish(skipping ? undefined : Buffer.concat(pieces));
}
