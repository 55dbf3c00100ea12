// What a user turn asks for, read from its words: whether it wants code written, and in which
// language. Both are read conservatively: a rule built on them drops a dialogue, so an unclear
// request (two languages named, "explain without code") asks for nothing in particular.
import type { LanguageName } from "../../pipeline/code/index.js";

/** How users name the languages the sandbox runs; case matters where the name is an English word. */
const NAMED: [LanguageName, RegExp][] = [
  ["python", /\bpython\d?\b/i],
  ["typescript", /\btypescript\b|\bTS\b/i],
  ["javascript", /\bjavascript\b|\bnode\.?js\b|\bJS\b/i],
  ["java", /\bjava\b(?!\s*script)/i],
  ["cpp", /\bc\+\+|\bcpp\b/i],
  ["csharp", /\bc#|\bc\s?sharp\b/i],
  // "go" and "c" are words too: only the capitalised name in a phrase that means the language
  [
    "go",
    /\b[Gg]olang\b|\b(?:in|using|with)\s+Go\b|\bGo\s+(?:program|code|function|script|module|package|solution|version|implementation)\b/,
  ],
  ["c", /\b(?:in|using|with)\s+C(?![+#\w])|\bC\s+(?:program|code|function|language)\b|\bANSI C\b/],
  // English words too: only the capitalised name
  ["rust", /\bRust\b/],
  ["ruby", /\bRuby\b/],
  ["php", /\bphp\b/i],
  ["kotlin", /\bKotlin\b/],
  ["swift", /\bSwift\b/],
  ["scala", /\bScala\b/],
];

/** Languages close enough that an answer in one serves a question about the other. */
const KIN: Partial<Record<LanguageName, LanguageName[]>> = {
  javascript: ["typescript"],
  typescript: ["javascript"],
  c: ["cpp"],
  cpp: ["c"],
};

/** The one programming language a request names, or undefined when it names none or several. */
export function askedLanguage(text: string): LanguageName | undefined {
  const named = NAMED.filter(([, pattern]) => pattern.test(text)).map(([lang]) => lang);
  return named.length === 1 ? named[0] : undefined;
}

/** Whether code in `lang` answers a request for `asked`. */
export function servesLanguage(asked: LanguageName, lang: LanguageName): boolean {
  return lang === asked || (KIN[asked]?.includes(lang) ?? false);
}

const WRITE_VERB =
  /\b(?:write|implement|create|build|develop|code|program|fix|debug|refactor|rewrite|modify|optimi[sz]e|complete|translate|convert)\b/i;
const CODE_NOUN =
  /\b(?:function|program|script|class|method|code|algorithm|snippet|solution|implementation|query|module|app|api|endpoint|regex)\b/i;
const NO_CODE = /\bwithout (?:any |writing )?code\b|\bno code\b|\bin (?:plain )?words\b/i;

/** Whether a request asks for code to be written: a verb of writing and a noun for code, both in it. */
export function asksForCode(text: string): boolean {
  if (NO_CODE.test(text)) return false;
  return text
    .split(/(?<=[.?!])\s+|\n+/)
    .some((sentence) => WRITE_VERB.test(sentence) && CODE_NOUN.test(sentence));
}
