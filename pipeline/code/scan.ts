// A small lexer for C-family source: enough to find the brace that closes a block while skipping
// braces inside strings, character literals and comments. It is not a parser; it only has to be
// right about where literals and comments start and end.
import type { LanguageName } from "./languages.js";

/**
 * Index of the `}` matching the `{` at `open`, or -1 when the block never closes.
 * Understands // and /* comments, "..." strings, '...' char literals (but not Rust lifetimes),
 * Go/JS backtick strings, C++ R"(...)" and Rust r#"..."# raw strings, C# @"..." verbatim strings.
 */
export function findClosingBrace(code: string, open: number, language: LanguageName): number {
  let depth = 0;
  let i = open;
  while (i < code.length) {
    const ch = code[i]!;
    const next = code[i + 1];
    if (ch === "/" && next === "/") {
      i = lineEnd(code, i);
      continue;
    }
    if (ch === "/" && next === "*") {
      const end = code.indexOf("*/", i + 2);
      i = end < 0 ? code.length : end + 2;
      continue;
    }
    if (ch === "#" && (language === "python" || language === "ruby" || language === "php")) {
      i = lineEnd(code, i);
      continue;
    }
    const raw = rawStringEnd(code, i, language);
    if (raw > i) {
      i = raw;
      continue;
    }
    if (ch === '"' || ch === "`" || (ch === "'" && !isRustLifetime(code, i, language))) {
      i = quotedEnd(code, i, ch);
      continue;
    }
    if (ch === "{") depth++;
    else if (ch === "}") {
      depth--;
      if (depth === 0) return i;
    }
    i++;
  }
  return -1;
}

function lineEnd(code: string, from: number): number {
  const nl = code.indexOf("\n", from);
  return nl < 0 ? code.length : nl;
}

/** End (exclusive) of a quoted literal starting at `start`; stops at a newline for unterminated ones. */
function quotedEnd(code: string, start: number, quote: string): number {
  let i = start + 1;
  while (i < code.length) {
    const ch = code[i];
    if (ch === "\\") {
      i += 2;
      continue;
    }
    if (ch === quote) return i + 1;
    if (ch === "\n" && quote !== "`") return i;
    i++;
  }
  return code.length;
}

function rawStringEnd(code: string, i: number, language: LanguageName): number {
  if (language === "cpp" && code.startsWith('R"', i) && !/\w/.test(code[i - 1] ?? "")) {
    const paren = code.indexOf("(", i + 2);
    if (paren < 0) return i;
    const delimiter = code.slice(i + 2, paren);
    const end = code.indexOf(`)${delimiter}"`, paren);
    return end < 0 ? code.length : end + delimiter.length + 2;
  }
  if (language === "rust" && code[i] === "r" && !/\w/.test(code[i - 1] ?? "")) {
    const match = /^r(#*)"/.exec(code.slice(i, i + 20));
    if (!match) return i;
    const closing = `"${match[1]}`;
    const end = code.indexOf(closing, i + match[0].length);
    return end < 0 ? code.length : end + closing.length;
  }
  if (language === "csharp" && code.startsWith('@"', i)) {
    let j = i + 2;
    while (j < code.length) {
      if (code[j] === '"' && code[j + 1] === '"') j += 2;
      else if (code[j] === '"') return j + 1;
      else j++;
    }
    return code.length;
  }
  return i;
}

/** In Rust, 'a (a lifetime) is not a char literal: a char literal closes within a few characters. */
function isRustLifetime(code: string, i: number, language: LanguageName): boolean {
  if (language !== "rust") return false;
  return !/^'(\\.[^']*|[^'\\])'/.test(code.slice(i, i + 12));
}

/** Removes the text between `start` and `end` (exclusive) plus the line break that follows. */
export function cutSpan(code: string, start: number, end: number): string {
  let from = start;
  while (from > 0 && (code[from - 1] === " " || code[from - 1] === "\t")) from--;
  let to = end;
  if (code[to] === "\r") to++;
  if (code[to] === "\n") to++;
  return code.slice(0, from) + code.slice(to);
}
