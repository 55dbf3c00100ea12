// Pulls code out of model answers: complete fenced blocks first, then an unterminated fence (the
// answer was cut off), then a heuristic for answers with no fences at all. Every stage that runs or
// inspects model code goes through here, so all of them agree on what "the code" of an answer is.
import { detectLanguage } from "./detect.js";
import { canonicalLanguage, isProgrammingLanguage, type LanguageName } from "./languages.js";
import { removeMain } from "./strip-main.js";

export interface CodeBlock {
  /** Canonical language: from the fence's info string, else detected from the code; undefined if unknown. */
  lang: LanguageName | undefined;
  /** The fence's info string as written ("" when there was none or the block is not fenced). */
  tag: string;
  code: string;
  /** True for ``` / ~~~ blocks, false for code found by the heuristic. */
  fenced: boolean;
  /** False for a fence that was opened and never closed. */
  complete: boolean;
}

export interface MainCodeOptions {
  /** Only blocks in this language (or one whose code it accepts: C in C++, JavaScript in TypeScript). */
  language?: LanguageName;
  /** The function or class the caller will call: a block that defines it wins. */
  entryPoint?: string;
  /** Remove the block's own main / `if __name__ == "__main__":` because a harness brings its own. */
  removeMain?: boolean;
}

const OPEN_FENCE = /^([ \t]*)(`{3,}|~{3,})[ \t]*([^`\n]*?)[ \t]*$/;

/** Every code block of an answer, in order of appearance. */
export function extractCodeBlocks(answer: string): CodeBlock[] {
  const lines = answer.replace(/\r\n?/g, "\n").split("\n");
  const blocks: CodeBlock[] = [];
  let i = 0;
  while (i < lines.length) {
    const open = OPEN_FENCE.exec(lines[i]!);
    if (!open) {
      i++;
      continue;
    }
    const indent = open[1]!.length;
    const fence = open[2]!;
    const tag = open[3]!.trim();
    const close = findClosingFence(lines, i + 1, fence);
    const body = lines.slice(i + 1, close.line).map((line) => dedent(line, indent));
    if (close.trailing !== undefined) body.push(dedent(close.trailing, indent));
    const code = trimBlankLines(body.join("\n"));
    const lang = tag === "" ? detectLanguage(code) : canonicalLanguage(tag);
    blocks.push({ lang, tag, code, fenced: true, complete: close.found });
    i = close.line + 1;
  }
  if (blocks.length > 0) return blocks;
  return findUnfencedCode(lines).map((code) => ({
    lang: detectLanguage(code),
    tag: "",
    code,
    fenced: false,
    complete: true,
  }));
}

/**
 * The code an answer is about: among blocks in the wanted language, the one that defines the entry
 * point wins; then a block whose language is known beats an untagged one nobody can place; then
 * complete fences beat an unterminated fence, which beats heuristic code; then the longest block
 * wins (the solution, not its usage example). Undefined if none.
 */
export function extractMainCode(answer: string, options: MainCodeOptions = {}): CodeBlock | undefined {
  const candidates = extractCodeBlocks(answer)
    .map((block, index) => ({ block, index }))
    .filter(({ block }) => isCandidate(block, options.language));
  if (candidates.length === 0) return undefined;
  const defines = (block: CodeBlock): number =>
    options.entryPoint && definesEntryPoint(block.code, options.entryPoint) ? 0 : 1;
  // A block known to be in the language beats one of unknown language (often program output).
  const unknown = (block: CodeBlock): number => (block.lang === undefined ? 1 : 0);
  candidates.sort(
    (a, b) =>
      defines(a.block) - defines(b.block) ||
      unknown(a.block) - unknown(b.block) ||
      kindRank(a.block) - kindRank(b.block) ||
      b.block.code.length - a.block.code.length ||
      a.index - b.index,
  );
  const chosen = { ...candidates[0]!.block };
  const language = options.language ?? chosen.lang;
  if (options.removeMain && language) chosen.code = removeMain(chosen.code, language).code;
  return chosen;
}

/** True when `code` defines a function, method or class called `name`, in any common syntax. */
export function definesEntryPoint(code: string, name: string): boolean {
  const n = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const forms = [
    `^\\s*(?:async\\s+)?def\\s+(?:self\\.)?${n}\\b`, // python, ruby, scala
    `\\bfunction\\s*\\*?\\s*&?\\s*${n}\\s*[<(]`, // javascript, typescript, php, lua
    `\\b(?:const|let|var)\\s+${n}\\s*(?::[^=]+)?=`, // javascript, typescript
    `^\\s*(?:local\\s+)?${n}\\s*(?:<-|=)\\s*(?:function|lambda)\\b`, // r, lua, python lambdas
    `\\bfunc\\s+(?:\\([^)]*\\)\\s*)?${n}\\s*[[(]`, // go, swift
    `\\bfn\\s+${n}\\s*[<(]`, // rust
    `\\bfun\\s+(?:<[^>]*>\\s*)?${n}\\s*\\(`, // kotlin
    `\\bsub\\s+${n}\\b`, // perl
    `\\b(?:class|struct|interface|object)\\s+${n}\\b`,
    // C-family functions and methods: a parameter list followed by a body.
    `\\b${n}\\s*(?:<[^>]*>)?\\s*\\([^;{)]*\\)\\s*(?:const\\s*)?(?:noexcept\\s*)?(?:throws\\s+[\\w.,\\s]+)?(?:->\\s*[^{;]+|:\\s*[^{;=]+)?\\{`,
  ];
  return new RegExp(forms.join("|"), "m").test(code);
}

function isCandidate(block: CodeBlock, language: LanguageName | undefined): boolean {
  if (block.code.trim() === "") return false;
  if (!language) return block.lang ? isProgrammingLanguage(block.lang) : block.tag === "";
  if (block.lang === undefined) return block.tag === "";
  return accepts(language, block.lang);
}

/** Whether code tagged `found` may be run as `wanted` (the usual mislabels that still work). */
function accepts(wanted: LanguageName, found: LanguageName): boolean {
  if (wanted === found) return true;
  return (wanted === "cpp" && found === "c") || (wanted === "typescript" && found === "javascript");
}

function kindRank(block: CodeBlock): number {
  if (block.fenced) return block.complete ? 0 : 1;
  return 2;
}

/** The line of the closing fence, or a line that ends with it ("return x```"), or the end of input. */
function findClosingFence(
  lines: string[],
  from: number,
  fence: string,
): { line: number; found: boolean; trailing?: string } {
  const char = fence[0]!;
  for (let j = from; j < lines.length; j++) {
    const trimmed = lines[j]!.trim();
    if (trimmed.length >= fence.length && [...trimmed].every((c) => c === char))
      return { line: j, found: true };
  }
  for (let j = from; j < lines.length; j++) {
    const line = lines[j]!.trimEnd();
    // Only a fence glued to code closes here; a line that opens another block does not.
    if (line.endsWith(fence) && !OPEN_FENCE.test(line)) {
      return { line: j, found: true, trailing: line.slice(0, -fence.length) };
    }
  }
  return { line: lines.length, found: false };
}

function dedent(line: string, indent: number): string {
  let k = 0;
  while (k < indent && (line[k] === " " || line[k] === "\t")) k++;
  return line.slice(k);
}

function trimBlankLines(text: string): string {
  return text.replace(/^(?:[ \t]*\n)+/, "").replace(/(?:\n[ \t]*)+$/, "");
}

const CODE_LINE = [
  /[;{}]\s*$/,
  /^\s*[})\]]/,
  /^\s*(def|class|import|from|return|if|elif|else|for|while|try|except|finally|with|function|const|let|var|public|private|protected|static|package|func|fn|let|use|print|printf|puts|echo|#include|using|namespace|struct|impl|template|SELECT|INSERT|CREATE|UPDATE|DELETE)\b/,
  /^\s*[\w.[\]'"]+\s*(=|\+=|-=|\*=|:=|<-)\s*\S/,
  /^\s*[\w.]+\([^)]*\)\s*;?\s*$/,
  /^(\t| {2,})\S/,
  /^\s*@\w+/,
];

type LineKind = "code" | "blank" | "comment" | "prose";

function classifyLine(line: string): LineKind {
  if (/^\s*$/.test(line)) return "blank";
  // "# x" is a Python comment or a Markdown heading: it may sit inside code, but never starts it.
  if (/^\s*(#(?!include|define|!)|\/\/|--\s)/.test(line)) return "comment";
  if (isProseLine(line)) return "prose";
  return CODE_LINE.some((pattern) => pattern.test(line)) ? "code" : "prose";
}

function isProseLine(line: string): boolean {
  const trimmed = line.trim();
  if (/^([-*+]|\d+[.)])\s+[A-Za-z`*]/.test(trimmed)) return true;
  const words = trimmed.split(/\s+/).filter((w) => /^[A-Za-z'’,-]+[.,:;!?]?$/.test(w)).length;
  return words >= 5 && words / trimmed.split(/\s+/).length > 0.7 && !/[;{}]$/.test(trimmed);
}

/**
 * Runs of code-looking lines in an answer without fences (blank lines allowed inside a run). A run
 * needs two code lines, unless the whole answer is a single line of code.
 */
function findUnfencedCode(lines: string[]): string[] {
  const runs: string[] = [];
  let current: string[] = [];
  let codeLines = 0;
  const flush = () => {
    while (current.length > 0 && classifyLine(current[current.length - 1]!) !== "code") current.pop();
    if (codeLines >= 2 || (codeLines === 1 && lines.filter((l) => l.trim()).length === 1)) {
      runs.push(trimBlankLines(current.join("\n")));
    }
    current = [];
    codeLines = 0;
  };
  for (const line of lines) {
    const kind = classifyLine(line);
    if (kind === "code") {
      current.push(line);
      codeLines++;
    } else if (kind === "prose") {
      flush();
    } else if (current.length > 0) {
      current.push(line);
    }
  }
  flush();
  return runs;
}
