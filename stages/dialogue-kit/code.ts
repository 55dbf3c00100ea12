// "The code" of an assistant answer, as the paper's interpreter would run it: the answer's main block
// in a language the sandbox runs. A Python answer often splits its solution and its usage over
// several blocks that a notebook would run one after the other, so all of its Python blocks run, in
// order, as one cell; in other languages a second block is usually an alternative or a fragment, so
// only the main block runs (pipeline/code's choice: the longest complete fence of the language).
import {
  canonicalLanguage,
  extractCodeBlocks,
  extractMainCode,
  isProgrammingLanguage,
  type LanguageName,
} from "../../pipeline/code/index.js";
import { runnable } from "../../pipeline/execution/index.js";

export interface AnswerCode {
  code: string;
  lang: LanguageName;
}

/**
 * The runnable code of an answer, or undefined when it has none. `hint` (the record's language) picks
 * among blocks of several languages and names an untagged block nobody can place.
 */
export function codeOfAnswer(answer: string, hint?: string): AnswerCode | undefined {
  const wanted = canonicalLanguage(hint);
  const main =
    (wanted && runnable(wanted) ? extractMainCode(answer, { language: wanted }) : undefined) ??
    extractMainCode(answer);
  if (!main) return undefined;
  const lang = main.lang ?? (wanted && runnable(wanted) ? wanted : undefined);
  if (!lang || !isProgrammingLanguage(lang) || !runnable(lang)) return undefined;
  if (lang !== "python") return { code: main.code, lang };
  const cells = extractCodeBlocks(answer)
    .filter((b) => b.lang === "python" && b.code.trim() !== "")
    .map((b) => b.code);
  return { code: cells.length > 0 ? cells.join("\n\n") : main.code, lang };
}
