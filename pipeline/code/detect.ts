// Guesses the language of a code block that carries no fence tag, from syntax alone. Each language
// has weighted signals; the best total wins when it is clear of the runner-up, otherwise we say we
// do not know rather than guess (a wrong tag sends code to the wrong toolchain).
import type { LanguageName } from "./languages.js";

interface Signal {
  pattern: RegExp;
  weight: number;
}

const m = (pattern: RegExp, weight: number): Signal => ({ pattern, weight });

const SIGNALS: Partial<Record<LanguageName, Signal[]>> = {
  python: [
    m(/^\s*def\s+\w+\s*\([^)]*\)\s*(->\s*[^:]+)?:\s*(#.*)?$/m, 4),
    m(/^\s*(from\s+[\w.]+\s+)?import\s+[\w., ]+\s*$/m, 1),
    m(/^\s*from\s+[\w.]+\s+import\s+/m, 2),
    m(/^\s*class\s+\w+(\([^)]*\))?:\s*$/m, 3),
    m(/^[ \t]*(if|elif|while|for|with|try|except|else)\b[^{;\n]*:[ \t]*(#.*)?$/m, 2),
    m(/\bprint\(/, 1),
    m(/\bself\./, 1),
    m(/^\s*elif\b/m, 3),
    m(/\bif\s+__name__\s*==\s*['"]__main__['"]/, 5),
    m(/^\s*@\w+/m, 1),
    m(/\bNone\b|\bTrue\b|\bFalse\b/, 1),
    m(/\blen\(|\brange\(/, 1),
  ],
  javascript: [
    m(/\bconsole\.log\(/, 3),
    m(/^\s*(const|let|var)\s+\w+\s*=/m, 2),
    m(/\bfunction\s*\w*\s*\([^)]*\)\s*\{/, 2),
    m(/=>\s*[{(\w]/, 1),
    m(/\brequire\(['"][^'"]+['"]\)/, 3),
    m(/\bmodule\.exports\b|\bexport\s+(default|function|const)\b/, 2),
    m(/\bdocument\.|\bwindow\./, 2),
    m(/===|!==/, 1),
  ],
  typescript: [
    m(/^\s*(export\s+)?(interface|type)\s+\w+(<[^>]*>)?\s*(=|\{)/m, 4),
    m(/\b(const|let|var)\s+\w+\s*:\s*[\w<>[\]|]+\s*=/, 3),
    m(/\bfunction\s+\w+\s*(<[^>]*>)?\([^)]*:\s*[\w<>[\]|, ]+\)/, 4),
    m(/\)\s*:\s*(number|string|boolean|void|any|unknown|Promise<[^>]*>)\s*(\{|=>)/, 4),
    m(/\b(public|private|readonly)\s+\w+\s*:/, 2),
    m(/\bconsole\.log\(/, 2),
    m(/\bArray<\w+>|\bRecord<\w+,/, 2),
    m(/\bas\s+(number|string|any|unknown|const)\b/, 2),
  ],
  java: [
    m(/\bpublic\s+(static\s+)?(final\s+)?class\s+\w+/, 3),
    m(/\bpublic\s+static\s+void\s+main\s*\(\s*String/, 5),
    m(/\bSystem\.out\.print(ln|f)?\(/, 5),
    m(/^\s*import\s+java\.[\w.*]+;/m, 5),
    m(/\b(private|public|protected)\b[^\n;=]*\([^)\n]*\)\s*(throws\s+[\w., ]+)?\{/, 2),
    m(/\bnew\s+(ArrayList|HashMap|HashSet|Scanner|StringBuilder)\s*</, 3),
    m(/@Override\b/, 3),
    m(/\bString\[\]\s+\w+/, 2),
  ],
  cpp: [
    m(/^\s*#include\s*<(iostream|vector|string|map|set|unordered_map|algorithm|bits\/stdc\+\+\.h)>/m, 5),
    m(/\bstd::/, 3),
    m(/\busing\s+namespace\s+std\s*;/, 5),
    m(/\bcout\s*<<|\bcin\s*>>/, 4),
    m(/\btemplate\s*<\s*(typename|class)\b/, 3),
    m(/\bvector\s*<\s*[\w:<>]+\s*>/, 2),
    m(/^\s*#include\s*[<"]/m, 1),
    m(/\bint\s+main\s*\(/, 1),
    m(/\bnullptr\b|\bauto\s+\w+\s*=/, 1),
  ],
  c: [
    m(/^\s*#include\s*<(stdio|stdlib|string|math|stdbool|stdint)\.h>/m, 4),
    m(/\bprintf\s*\(|\bscanf\s*\(/, 2),
    m(/\bmalloc\s*\(|\bfree\s*\(/, 2),
    m(/\bint\s+main\s*\(/, 1),
    m(/^\s*#include\s*[<"]/m, 1),
    m(/\btypedef\s+struct\b/, 2),
  ],
  csharp: [
    m(/^\s*using\s+System(\.[\w.]+)?\s*;/m, 5),
    m(/\bConsole\.(Write|WriteLine|ReadLine)\s*\(/, 5),
    m(/^\s*namespace\s+[\w.]+\s*(\{|;)/m, 3),
    m(/\bstatic\s+void\s+Main\s*\(/, 4),
    m(/\bpublic\s[^\n;=]*\b[A-Z]\w*\s*\([^)\n]*\)\s*\{/, 1),
    m(/\b(List|Dictionary|HashSet)<[\w, <>]+>\s+\w+\s*=/, 1),
    m(/\bvar\s+\w+\s*=\s*new\b/, 2),
    m(/\{\s*get;\s*(set;)?\s*\}/, 4),
  ],
  go: [
    m(/^\s*package\s+\w+\s*$/m, 4),
    m(/^\s*func\s+(\([^)]*\)\s*)?\w+\s*\([^)]*\)\s*[\w[\]*(), ]*\{/m, 4),
    m(/\bfmt\.(Print|Sprint|Fprint|Errorf)/, 4),
    m(/\w+\s*:=\s*/, 2),
    m(/^\s*import\s*\(\s*$/m, 2),
    m(/\bmap\[\w+\]\w+|\[\]\w+\{/, 2),
    m(/\bfunc\s+main\s*\(\s*\)/, 2),
  ],
  rust: [
    m(/\bfn\s+\w+\s*(<[^>]*>)?\s*\([^)]*\)\s*(->\s*[^{]+)?\{/, 4),
    m(/\blet\s+mut\s+\w+/, 4),
    m(/\bprintln!\s*\(|\bvec!\s*\[|\bformat!\s*\(/, 4),
    m(/^\s*use\s+std::/m, 4),
    m(/\bimpl\b[^{]*\{/, 2),
    m(/&mut\s|&str\b|\bi32\b|\busize\b|\bOption<|\bResult</, 2),
    m(/\bmatch\s+\w+\s*\{/, 1),
  ],
  php: [
    m(/<\?php/, 10),
    m(/\$\w+\s*=/, 2),
    m(/\becho\s+/, 1),
    m(/\bfunction\s+\w+\s*\(\s*(\??\w+\s+)?\$/, 4),
    m(/->\w+\(/, 1),
    m(/\barray\(/, 1),
  ],
  ruby: [
    m(/^\s*def\s+[\w?!]+(\s*\([^)]*\))?\s*$/m, 3),
    m(/^\s*end\s*$/m, 2),
    m(/\bputs\s+/, 3),
    m(/\brequire\s+['"][\w/]+['"]/, 2),
    m(/\.each\s+do\s*\|/, 4),
    m(/\battr_(accessor|reader|writer)\b/, 4),
    m(/^\s*class\s+\w+\s*(<\s*\w+)?\s*$/m, 1),
    m(/\bunless\b|\belsif\b/, 3),
  ],
  swift: [
    m(/^\s*import\s+(Foundation|UIKit|SwiftUI)\s*$/m, 6),
    m(/\bfunc\s+\w+\s*\([^)]*\)\s*(->\s*[\w[\]?:]+\s*)?\{/, 2),
    m(/\b(let|var)\s+\w+\s*:\s*[A-Z][\w[\]?]*\s*=/, 2),
    m(/\bguard\s+let\b|\bif\s+let\b/, 4),
  ],
  kotlin: [
    m(/\bfun\s+\w+\s*\(/, 4),
    m(/\bval\s+\w+\s*(:\s*\w+)?\s*=/, 2),
    m(/\bprintln\(/, 1),
    m(/\bdata\s+class\b/, 4),
  ],
  scala: [
    m(/\bobject\s+\w+(\s+extends\s+App)?\s*\{/, 3),
    m(/\bdef\s+\w+\s*(\[[^\]]*\])?\([^)]*\)\s*:\s*[\w[\]]+\s*=/, 4),
    m(/\bcase\s+class\b/, 4),
    m(/\bval\s+\w+\s*(:\s*[\w[\]]+)?\s*=/, 1),
  ],
  sql: [
    m(/\bSELECT\b[\s\S]+?\bFROM\b/i, 4),
    m(/\b(CREATE|DROP|ALTER)\s+(TABLE|VIEW|INDEX|DATABASE)\b/i, 5),
    m(/\bINSERT\s+INTO\b/i, 5),
    m(/\bUPDATE\s+\w+\s+SET\b/i, 4),
    m(/\b(WHERE|GROUP\s+BY|ORDER\s+BY|JOIN)\b/i, 1),
  ],
  shell: [
    m(/^#!\s*\/(usr\/)?bin\/(env\s+)?(ba|z)?sh\b/m, 10),
    m(/^\s*(echo|export|cd|ls|mkdir|sudo|apt-get|pip|npm|git|chmod|curl)\s/m, 2),
    m(/\$\{?\w+\}?/, 1),
    m(/^\s*(if|while)\s+\[\[?\s/m, 4),
    m(/^\s*(fi|done|esac)\s*$/m, 4),
  ],
  r: [
    m(/\w+\s*<-\s*(function\b|c\(|\w)/, 4),
    m(/\blibrary\(\w+\)/, 4),
    m(/\bdata\.frame\(|\bggplot\(/, 4),
    m(/\bcat\(|\bpaste0?\(/, 1),
  ],
  perl: [
    m(/^#!\s*\/usr\/bin\/(env\s+)?perl/m, 10),
    m(/\bmy\s+[$@%]\w+/, 4),
    m(/^\s*use\s+(strict|warnings)\s*;/m, 5),
    m(/\bsub\s+\w+\s*\{/, 3),
  ],
  lua: [
    m(/^\s*local\s+\w+\s*=/m, 3),
    m(/^\s*(local\s+)?function\s+[\w.:]+\s*\([^)]*\)\s*$/m, 3),
    m(/\bthen\s*$/m, 2),
    m(/^\s*end\s*$/m, 1),
    m(/\bipairs\(|\bpairs\(/, 4),
    m(/~=/, 2),
  ],
  html: [
    m(/<!DOCTYPE\s+html>/i, 10),
    m(/<(html|head|body|div|span|p|a|script|style|ul|li|table)\b[^>]*>/i, 3),
    m(/<\/(html|head|body|div|span|p|a|script|style|ul|li|table)>/i, 3),
  ],
  css: [
    m(/^[ \t]*[.#]?[\w-][\w .#:>,-]*\{[ \t]*$/m, 1),
    m(/^\s*[\w-]+\s*:\s*[^;{}]+;\s*$/m, 2),
    m(/@media\b|@import\b|!important/, 3),
  ],
  json: [m(/^\s*[{[]\s*$/m, 1), m(/^\s*"[^"]+"\s*:\s*/m, 2)],
};

const SHEBANGS: Array<[RegExp, LanguageName]> = [
  [/^#!.*\bpython[\d.]*\b/, "python"],
  [/^#!.*\b(node|nodejs)\b/, "javascript"],
  [/^#!.*\b(ba|z|k)?sh\b/, "shell"],
  [/^#!.*\bruby\b/, "ruby"],
  [/^#!.*\bperl\b/, "perl"],
  [/^#!.*\bRscript\b/, "r"],
  [/^#!.*\blua\b/, "lua"],
  [/^#!.*\bphp\b/, "php"],
];

/** Minimum score, and lead over the runner-up, before a guess is trusted. */
const MIN_SCORE = 4;
const MIN_LEAD = 2;

/** Scores of every language with any signal, best first. Exposed for tests and for debugging a guess. */
export function scoreLanguages(code: string): Array<{ language: LanguageName; score: number }> {
  const scores: Array<{ language: LanguageName; score: number }> = [];
  for (const [language, signals] of Object.entries(SIGNALS) as Array<[LanguageName, Signal[]]>) {
    let score = 0;
    for (const signal of signals) if (signal.pattern.test(code)) score += signal.weight;
    if (score > 0) scores.push({ language, score });
  }
  // TypeScript is JavaScript plus types: only type syntax should make a block TypeScript.
  const ts = scores.find((s) => s.language === "typescript");
  const js = scores.find((s) => s.language === "javascript");
  if (ts && js && ts.score <= js.score + 1) ts.score = Math.min(ts.score, js.score - MIN_LEAD);
  // C++ is a superset of C in what these signals see; C only wins without any C++-only signal.
  const cpp = scores.find((s) => s.language === "cpp");
  const c = scores.find((s) => s.language === "c");
  if (cpp && c && cpp.score > 2) c.score = Math.min(c.score, cpp.score - MIN_LEAD);
  return scores.sort((a, b) => b.score - a.score || a.language.localeCompare(b.language));
}

/**
 * Guesses a code block's language from its syntax: a shebang decides outright; otherwise the best
 * weighted score wins if it is at least MIN_SCORE and MIN_LEAD ahead of the runner-up.
 * Returns undefined when unsure.
 */
export function detectLanguage(code: string): LanguageName | undefined {
  const firstLine = code.trimStart().split("\n", 1)[0] ?? "";
  for (const [pattern, language] of SHEBANGS) if (pattern.test(firstLine)) return language;
  const [best, second] = scoreLanguages(code);
  if (!best || best.score < MIN_SCORE) return undefined;
  if (second && best.score - second.score < MIN_LEAD) return undefined;
  return best.language;
}
