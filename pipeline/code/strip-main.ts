// Removes a program's own entry point (`if __name__ == "__main__":`, `int main()`, `func main()`,
// `public static void main`...) when the code is about to be wrapped by a harness that brings its
// own: two mains do not compile, and a script's demo block would run before the tests.
import type { LanguageName } from "./languages.js";
import { cutSpan, findClosingBrace } from "./scan.js";

export interface StrippedCode {
  code: string;
  /** True when an entry point was found and removed. */
  removed: boolean;
}

/** Where a brace-bodied main starts, per language (the match must end before its opening brace). */
const BRACED_MAIN: Partial<Record<LanguageName, RegExp>> = {
  c: /^[ \t]*(?:(?:static|signed|unsigned)\s+)*(?:int|void)\s+main\s*\([^)]*\)\s*/m,
  cpp: /^[ \t]*(?:(?:static|signed|unsigned)\s+)*(?:int|void|auto)\s+main\s*\([^)]*\)\s*(?:->\s*int\s*)?/m,
  java: /^[ \t]*(?:@\w+\s+)*(?:(?:public|static|final)\s+)+void\s+main\s*\([^)]*\)\s*(?:throws\s+[\w.,\s]+)?/m,
  csharp:
    /^[ \t]*(?:(?:public|private|internal|static|async)\s+)+(?:void|int|Task(?:<int>)?)\s+Main\s*\([^)]*\)\s*/m,
  go: /^func\s+main\s*\(\s*\)\s*/m,
  rust: /^[ \t]*(?:pub\s+)?fn\s+main\s*\(\s*\)\s*(?:->\s*[^{]+)?/m,
  kotlin: /^[ \t]*fun\s+main\s*\([^)]*\)\s*/m,
  scala: /^[ \t]*def\s+main\s*\([^)]*\)\s*(?::\s*Unit\s*)?=?\s*/m,
  javascript: /^[ \t]*if\s*\(\s*require\.main\s*===?\s*module\s*\)\s*/m,
  typescript: /^[ \t]*if\s*\(\s*require\.main\s*===?\s*module\s*\)\s*/m,
};

/** Removes the entry point of `code` written in `language`; code in other languages comes back unchanged. */
export function removeMain(code: string, language: LanguageName): StrippedCode {
  if (language === "python") return removeIndentedBlock(code, /^if\s+__name__\s*==\s*(['"])__main__\1\s*:/m);
  if (language === "ruby") return removeRubyMainGuard(code);
  const pattern = BRACED_MAIN[language];
  if (!pattern) return { code, removed: false };
  const match = pattern.exec(code);
  if (!match) return { code, removed: false };
  const open = match.index + match[0].length;
  const end =
    code[open] === "{"
      ? findClosingBrace(code, open, language) + 1
      : expressionBodyEnd(code, match, language);
  if (end <= 0) return { code, removed: false };
  let stripped = cutSpan(code, match.index, end);
  if (language === "java" || language === "csharp" || language === "kotlin" || language === "scala") {
    // A class that only held main is now empty, and would clash with the harness's own class.
    stripped = stripped.replace(
      /^[ \t]*(?:(?:public|private|internal|static|final)\s+)*(?:class|object)\s+\w+\s*\{\s*\}[ \t]*\r?\n?/gm,
      "",
    );
  }
  return { code: stripped, removed: true };
}

/**
 * End of a one-line expression body (`def main(args: Array[String]): Unit = println(1)` in Scala,
 * `fun main() = println(1)` in Kotlin), or -1 when the main has no such body.
 */
function expressionBodyEnd(code: string, match: RegExpExecArray, language: LanguageName): number {
  const open = match.index + match[0].length;
  const isExpression =
    (language === "scala" && /=\s*$/.test(match[0])) || (language === "kotlin" && code[open] === "=");
  if (!isExpression) return -1;
  const newline = code.indexOf("\n", open);
  return newline < 0 ? code.length : newline;
}

/** Removes a top-level `if ...:` line and the indented (or blank) lines under it. */
function removeIndentedBlock(code: string, header: RegExp): StrippedCode {
  const lines = code.split("\n");
  const start = lines.findIndex((line) => header.test(line));
  if (start < 0) return { code, removed: false };
  let end = start + 1;
  while (end < lines.length && (/^\s*$/.test(lines[end]!) || /^[ \t]/.test(lines[end]!))) end++;
  lines.splice(start, end - start);
  return { code: lines.join("\n").replace(/\n+$/, "\n"), removed: true };
}

function removeRubyMainGuard(code: string): StrippedCode {
  const lines = code.split("\n");
  const start = lines.findIndex((line) =>
    /^if\s+(__FILE__\s*==\s*\$(0|PROGRAM_NAME)|\$(0|PROGRAM_NAME)\s*==\s*__FILE__)\s*$/.test(line),
  );
  if (start < 0) return { code, removed: false };
  const end = lines.findIndex((line, i) => i > start && /^end\b/.test(line));
  if (end < 0) return { code, removed: false };
  lines.splice(start, end - start + 1);
  return { code: lines.join("\n"), removed: true };
}
