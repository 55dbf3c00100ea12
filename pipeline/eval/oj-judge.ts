// SandboxFusion's rule for judging a stdin/stdout test case: both outputs are stripped and split
// into lines (one trailing empty line on either side is forgiven); the line counts must match; each
// pair of lines is compared stripped and, by default, case-insensitively; lines that still differ
// pass when both read as numbers within a relative 1e-5 of the expected one.

export interface OutputJudgeOptions {
  /** compare letters exactly; SandboxFusion compares lower-cased by default */
  caseSensitive?: boolean;
}

const DIGITS = String.raw`\d(?:_?\d)*`;
/** What Python's float() accepts, which SandboxFusion uses to decide a line is a number. */
const FLOAT = new RegExp(
  String.raw`^[+-]?(?:(?:${DIGITS}(?:\.(?:${DIGITS})?)?|\.${DIGITS})(?:[eE][+-]?${DIGITS})?|inf|infinity|nan)$`,
  "i",
);

export function parseFloatLine(text: string): number | undefined {
  const trimmed = text.trim();
  if (!FLOAT.test(trimmed)) return undefined;
  const plain = trimmed.toLowerCase().replace(/_/g, "");
  if (plain.endsWith("nan")) return Number.NaN;
  if (plain.includes("inf"))
    return plain.startsWith("-") ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  return Number(plain);
}

function floatEqual(actual: number, expected: number): boolean {
  return Math.abs(actual - expected) / Math.max(Math.abs(expected), 1e-10) < 1e-5;
}

/** True when `actual` stdout is accepted for `expected` stdout under SandboxFusion's rules. */
export function outputsMatch(actual: string, expected: string, options: OutputJudgeOptions = {}): boolean {
  let got = actual.trim().split("\n");
  let want = expected.trim().split("\n");
  if (got.length - want.length === 1 && got[got.length - 1] === "") got = got.slice(0, -1);
  if (want.length - got.length === 1 && want[want.length - 1] === "") want = want.slice(0, -1);
  if (got.length !== want.length) return false;
  for (let i = 0; i < want.length; i++) {
    let a = got[i]!;
    let e = want[i]!;
    if (!options.caseSensitive) {
      a = a.toLowerCase();
      e = e.toLowerCase();
    }
    if (a.trim() === e.trim()) continue;
    const x = parseFloatLine(a);
    const y = parseFloatLine(e);
    if (x !== undefined && y !== undefined && floatEqual(x, y)) continue;
    return false;
  }
  return true;
}
