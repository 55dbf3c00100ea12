// One row's bytes to a value: UTF-8 is checked first (a row with broken bytes is rejected, not
// silently repaired with U+FFFD), then JSON.parse.
import { isUtf8 } from "node:buffer";
import { prefixOf, type RawRow } from "./types.js";

export function decodeJsonRow(bytes: Buffer, index: number): RawRow {
  if (!isUtf8(bytes)) {
    return {
      index,
      error: { reason: "invalid-utf8", detail: `row ${index} is not valid UTF-8`, prefix: prefixOf(bytes) },
    };
  }
  let text = bytes.toString("utf8");
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1); // a byte-order mark before the first row
  try {
    return { index, value: JSON.parse(text) };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return {
      index,
      error: { reason: "malformed-json", detail: `row ${index}: ${message}`, prefix: prefixOf(bytes) },
    };
  }
}

export function tooLarge(index: number, bytes: number, limit: number, prefix: string): RawRow {
  return {
    index,
    error: {
      reason: "row-too-large",
      detail: `row ${index} is ${bytes} bytes, over max_row_bytes (${limit}); raise stages.normalize.max_row_bytes to keep it`,
      prefix,
    },
  };
}
