// The check that shows a logical error: "a check the model wrote separately". Code with a logical
// mistake runs cleanly, so a run alone cannot tell it from correct code; the model is asked, in its own
// conversation, for assertions about what the task requires, and those run right after the code. A
// check that fails on the broken code and passes on the corrected one is evidence of a real logical
// error and a real fix; a check that is itself broken fails on the fix too, and the record is dropped.
import { canonicalLanguage, type LanguageName } from "../../pipeline/code/index.js";
import type { ChatMessage, LlmClient } from "../../pipeline/llm/types.js";
import { codeOfAnswer } from "../dialogue-kit/code.js";
import type { Program } from "../dialogue-kit/executor.js";

export function checkable(lang: LanguageName, checkLanguages: readonly string[]): boolean {
  return checkLanguages.some((l) => canonicalLanguage(l) === lang);
}

export function checkMessages(
  request: string,
  query: string,
  code: string,
  lang: LanguageName,
): ChatMessage[] {
  const content = request
    .replaceAll("{language}", lang)
    .replace("{query}", () => query)
    .replace("{code}", () => code);
  return [{ role: "user", content }];
}

/** The model's check for `code`, or undefined when its answer holds no code in the language. */
export async function writeCheck(
  client: LlmClient,
  messages: ChatMessage[],
  lang: LanguageName,
  signal: AbortSignal,
): Promise<string | undefined> {
  const answer = await client.chat(messages, { signal });
  const check = codeOfAnswer(answer.content, lang);
  return check && check.lang === lang ? check.code : undefined;
}

/**
 * The program that runs `check` after `code`: a later notebook cell in Python (the code as the cell
 * before it), the two texts one after the other elsewhere.
 */
export function withCheck(
  code: string,
  check: string,
  lang: LanguageName,
  notebook: boolean,
  context: unknown,
): Program {
  if (lang === "python" && notebook) return { code: check, lang, previous: [code], context };
  return { code: `${code}\n\n${check}\n`, lang, context };
}
