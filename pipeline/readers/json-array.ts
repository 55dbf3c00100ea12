// A JSON array streamed element by element, so a 121 MB `[{...}, {...}]` file never becomes one
// string: a byte scanner finds where each top-level element starts and ends (tracking strings,
// escapes and nesting across chunk boundaries) and hands just that element to JSON.parse.

import { UserError } from "../errors.js";
import { decodeJsonRow, tooLarge } from "./decode.js";
import { PREFIX_BYTES, prefixOf, type RawRow, type RowReadOptions } from "./types.js";

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/**
 * Whether the backslashes just before `at` (back to `from`, where the string was known not to be in
 * an escape) are an odd run: then the byte at `at` is escaped.
 */
function escapedAt(chunk: Buffer, at: number, from: number): boolean {
  let k = at - 1;
  while (k >= from && chunk[k] === BACKSLASH) k--;
  return (at - 1 - k) % 2 === 1;
}

type Where = "before-array" | "between" | "in-element" | "after-array";

export async function* readJsonArray(
  chunks: AsyncIterable<Buffer>,
  options: RowReadOptions & { file?: string },
): AsyncGenerator<RawRow> {
  const max = options.maxRowBytes;
  let where: Where = "before-array";
  let depth = 0;
  let inString = false;
  let escaped = false;
  let pieces: Buffer[] = [];
  let elementBytes = 0;
  let skipping = false;
  let prefix = "";
  let index = 0;
  let offset = 0; // bytes of the file before the current chunk, for messages

  /** keeps an element's bytes; `copy` those of an element that goes on into the next chunk (see chunksOf) */
  const keep = (chunk: Buffer, from: number, to: number, copy = false) => {
    if (to <= from) return;
    if (!skipping && elementBytes + (to - from) > max) {
      skipping = true;
      prefix = Buffer.concat([...pieces, chunk.subarray(from, Math.min(to, from + PREFIX_BYTES))])
        .subarray(0, PREFIX_BYTES)
        .toString("utf8");
      pieces = [];
    }
    if (!skipping) pieces.push(copy ? Buffer.from(chunk.subarray(from, to)) : chunk.subarray(from, to));
    elementBytes += to - from;
  };
  /** the row of the element just ended */
  const take = (): RawRow => {
    const row = skipping
      ? tooLarge(index, elementBytes, max, prefix)
      : decodeJsonRow(Buffer.concat(pieces), index);
    index++;
    pieces = [];
    elementBytes = 0;
    skipping = false;
    return row;
  };
  /** what is left after the elements (trailing data, or no array at all), as one bad row */
  const afterElements = (detail: string, prefix: string): RawRow => ({
    index,
    error: { reason: "malformed-json", detail, prefix },
  });

  let last: RawRow | undefined;
  reading: for await (const chunk of chunks) {
    let i = 0;
    let elementStart = where === "in-element" ? 0 : -1;
    const n = chunk.length;
    /** the row of the element that ends before `to`, and where that leaves the scan */
    const end = (to: number, next: Where): RawRow => {
      keep(chunk, elementStart, to);
      where = next;
      elementStart = -1;
      return take();
    };
    while (i < n) {
      let row: RawRow | undefined;
      if (where === "in-element") {
        if (inString) {
          if (escaped) {
            escaped = false;
            i++;
            continue;
          }
          // jump to the next quote that no odd run of backslashes escapes (strings are most of the
          // bytes; a quote is rarer than a backslash in code, and each search is one memchr)
          let quote = chunk.indexOf(QUOTE, i);
          while (quote !== -1 && escapedAt(chunk, quote, i)) quote = chunk.indexOf(QUOTE, quote + 1);
          if (quote === -1) {
            escaped = escapedAt(chunk, n, i);
            i = n;
            continue;
          }
          inString = false;
          i = quote + 1;
          if (depth === 0) row = end(i, "between");
        } else {
          const c = chunk[i]!;
          if (c === QUOTE) inString = true;
          else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
          else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
            // `]` at depth 0 ends a bare scalar element and the array
            if (depth === 0) row = end(i, "after-array");
            else if (--depth === 0) row = end(i + 1, "between");
          } else if (depth === 0 && (c === COMMA || isSpace(c))) {
            // end of a bare scalar (number, true, false, null)
            row = end(i, "between");
          }
          i++;
        }
        if (row) yield row;
        continue;
      }
      const c = chunk[i]!;
      if (isSpace(c)) {
        i++;
        continue;
      }
      if (where === "before-array") {
        if (c === 0xef || c === 0xbb || c === 0xbf) {
          i++; // a byte-order mark
          continue;
        }
        if (c !== OPEN_BRACKET) {
          throw new UserError(
            `${options.file ?? "input"} is not a JSON array (it starts with ${JSON.stringify(String.fromCharCode(c))}); ` +
              "if it holds one JSON object per line, name it .jsonl or set the source's `format: jsonl`",
          );
        }
        where = "between";
        i++;
        continue;
      }
      if (where === "after-array") {
        // every element is out already; what follows is reported once, as a bad row, and not read
        last = afterElements(
          `unexpected data after the closing ] of the array, at byte ${offset + i}; it is not read`,
          prefixOf(chunk.subarray(i)),
        );
        break reading;
      }
      // between elements
      if (c === COMMA) {
        i++;
        continue;
      }
      if (c === CLOSE_BRACKET) {
        where = "after-array";
        i++;
        continue;
      }
      where = "in-element";
      elementStart = i;
      depth = 0;
      inString = false;
      escaped = false;
    }
    if (where === "in-element" && elementStart >= 0) keep(chunk, elementStart, n, true);
    offset += n;
  }
  if (last === undefined) {
    if (where === "in-element") {
      // the file ended inside an element: whatever was kept fails to parse and is rejected as such
      last = take();
    } else if (where === "before-array") {
      // a file verified against the hub but empty: said once, as a bad row, so the source is not silently empty
      last = afterElements("the file is empty; expected a JSON array", "");
    }
  }
  // `between`: a missing closing ] loses no element; the last element has been yielded already
  if (last) yield last;
}
