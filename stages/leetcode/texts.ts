// "Given that the original LeetCode solutions often lack natural-language explanations, we had GPT-4
// add text before the code" (prompts/leetcode-follow-up.md, the paper's prompt verbatim). The model
// writes only the text; the code after it is the validated code, byte for byte.
import { loadPrompt } from "../../pipeline/llm/prompts.js";
import type { ChatMessage, LlmClient } from "../../pipeline/llm/types.js";

export const TEXT_PROMPT = "leetcode-follow-up";

// The paper's placeholders have spaces in them, which prompts.ts's `{name}` syntax does not allow;
// they are filled here in one pass, so a problem or code that itself holds `{code}` stays as it is.
const SLOTS = /\{(previous dialogues|recent problem|code)\}/g;

export function renderTextPrompt(previous: readonly ChatMessage[], problem: string, code: string): string {
  const values: Record<string, string> = {
    "previous dialogues": JSON.stringify(
      previous.map((m) => ({ role: m.role, content: m.content })),
      null,
      2,
    ),
    "recent problem": problem,
    code,
  };
  return loadPrompt(TEXT_PROMPT).text.replace(SLOTS, (_, key: string) => values[key]!);
}

/**
 * The text of an answer: what comes before any code the model wrote anyway (it was told not to), and
 * without a restated `@@Code:` marker. Empty when nothing is left.
 */
export function cleanText(answer: string): string {
  let text = answer.replace(/\r\n?/g, "\n");
  const fence = text.search(/^[ \t]*(?:```|~~~)/m);
  if (fence >= 0) text = text.slice(0, fence);
  return text
    .replace(/@@Code:?\s*$/i, "")
    .replace(/^@@\w[\w ]*:?[ \t]*\n/, "")
    .trim();
}

/** A fence that the code cannot close early: one backtick longer than any run inside it. */
export function fenced(code: string, tag: string): string {
  const longest = Math.max(2, ...(code.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(longest + 1);
  return `${fence}${tag}\n${code}${code.endsWith("\n") ? "" : "\n"}${fence}`;
}

/** The assistant's answer: the model's text, then the code exactly as validated. */
export function assistantAnswer(text: string, code: string, tag: string): string {
  return `${text}\n\n${fenced(code, tag)}`;
}

export class EmptyTextError extends Error {
  constructor(readonly answer: string) {
    super(`the model wrote no text before the code (its answer: ${JSON.stringify(answer.slice(0, 200))})`);
    this.name = "EmptyTextError";
  }
}

/** Asks the model for the text before `code`, after the dialogue so far and the latest problem. */
export async function writeTextBeforeCode(
  client: LlmClient,
  previous: readonly ChatMessage[],
  problem: string,
  code: string,
  signal: AbortSignal,
): Promise<string> {
  const prompt = renderTextPrompt(previous, problem, code);
  const result = await client.chat([{ role: "user", content: prompt }], { signal });
  const text = cleanText(result.content);
  if (text === "") throw new EmptyTextError(result.content);
  return text;
}
