// Pieces every harness needs to write values as source code: string and character escaping in the
// dialect of each language family, and numbers that keep their floating-point-ness.
import { parseMapKey, type SchemaType } from "../schema-type.js";
import { UnsupportedTypeError } from "./harness.js";

/** How a language writes a character that cannot appear raw between quotes. */
export type EscapeStyle = "c" | "java" | "go" | "rust" | "csharp" | "js";

const SIMPLE: Record<string, string> = { "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t" };

function escapeControl(code: number, style: EscapeStyle): string {
  switch (style) {
    case "c":
    case "java":
      // Octal stops after three digits (C's \x would swallow following hex digits; Java's \u is
      // decoded before lexing, so \u000a would end the literal).
      return `\\${code.toString(8).padStart(3, "0")}`;
    case "go":
    case "rust":
      return `\\x${code.toString(16).padStart(2, "0")}`;
    case "csharp":
    case "js":
      return `\\u${code.toString(16).padStart(4, "0")}`;
  }
}

/** `text` between `quote`s, escaped for `style`; non-ASCII characters stay as UTF-8. */
export function quote(text: string, style: EscapeStyle, quoteChar = '"'): string {
  let out = quoteChar;
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    if (ch === quoteChar) out += `\\${ch}`;
    else if (SIMPLE[ch]) out += SIMPLE[ch];
    else if (code < 0x20 || code === 0x7f) out += escapeControl(code, style);
    else if (style === "js" && (code === 0x2028 || code === 0x2029)) out += escapeControl(code, style);
    else out += ch;
  }
  return out + quoteChar;
}

/** PHP and Ruby single-quoted strings: only `\` and `'` need escaping, nothing is interpolated. */
export function singleQuoted(text: string): string {
  return `'${text.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
}

/** A number that reads back as floating point in every C-like language ("2.0", not "2"). */
export function floatText(value: number): string {
  const text = String(value);
  return /[.eE]/.test(text) ? text : `${text}.0`;
}

/** Characters that fit a 16-bit char (Java, C#) or a one-byte char (C++). */
export function requireCharWidth(value: string, bits: 8 | 16, language: string): void {
  const code = value.codePointAt(0)!;
  if (bits === 8 && code > 0x7f) {
    throw new UnsupportedTypeError(
      `${language} char holds one byte; character ${JSON.stringify(value)} does not fit`,
    );
  }
  if (bits === 16 && code > 0xffff) {
    throw new UnsupportedTypeError(
      `${language} char holds one UTF-16 unit; character ${JSON.stringify(value)} does not fit`,
    );
  }
}

/** A map value's entries with keys read back in the key type (numbers for integer keys). */
export function mapEntries(
  value: unknown,
  type: Extract<SchemaType, { kind: "map" }>,
): Array<[unknown, unknown]> {
  return Object.entries(value as Record<string, unknown>).map(([key, item]) => [
    parseMapKey(key, type.key.kind),
    item,
  ]);
}

/** Indents every line of `text` but the first by `spaces`. */
export function indentRest(text: string, spaces: number): string {
  return text.replace(/\n/g, `\n${" ".repeat(spaces)}`);
}
