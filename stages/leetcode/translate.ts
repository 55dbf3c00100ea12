// TACO's solutions are Python; a follow-up in another language needs a translation. The strong model
// translates a validated solution (this request is ours, not the paper's: the paper only says the
// follow-up solutions may differ in language), and the translation is judged on the same tests as
// the original before it may be used.

import { extractMainCode } from "../../pipeline/code/extract.js";
import type { LanguageName } from "../../pipeline/code/languages.js";
import { cppType } from "../../pipeline/eval/harness/cpp.js";
import { javaType } from "../../pipeline/eval/harness/java.js";
import { typescriptType } from "../../pipeline/eval/harness/javascript.js";
import type { SchemaType } from "../../pipeline/eval/schema-type.js";
import type { Question } from "../../pipeline/eval/types.js";
import type { LlmClient } from "../../pipeline/llm/types.js";
import { languageDisplayName } from "./follow-up.js";

export interface TranslationTask {
  question: string;
  code: string;
  language: LanguageName;
  /** call-style problems: the entry to define; stdin/stdout problems: undefined */
  entry: { fn: string; cls: string | undefined } | undefined;
  /** call-style problems: the typed question the translation is judged with */
  typed?: Question | undefined;
}

// The types the eval library's harness passes, where a model would otherwise guess (int[] for a Java
// list, which would not compile against the harness's ArrayList<Integer>).
const TYPE_NAMES: Partial<Record<LanguageName, (type: SchemaType) => string>> = {
  java: javaType,
  cpp: cppType,
  javascript: typescriptType,
  typescript: typescriptType,
};

/** `nums: ArrayList<Integer>, k: Integer; returns Integer`, or undefined for languages without a hint. */
export function typeHint(question: Question | undefined, language: LanguageName): string | undefined {
  const name = TYPE_NAMES[language];
  if (!question || !name) return undefined;
  const params = question.params.map((p) => `${p.name}: ${name(p.type)}`).join(", ");
  return `${params || "no parameters"}; returns ${name(question.returnType)}`;
}

/** The request, as sent; part of the stage's fingerprint through `TRANSLATION_REQUEST_VERSION`. */
export function translationRequest(task: TranslationTask): string {
  const target = languageDisplayName(task.language);
  const shape = task.entry
    ? task.entry.cls
      ? `Write it as a public method \`${task.entry.fn}\` of a class \`Solution\`, taking the same arguments in the same order and returning the same value. Do not write a main function or any input or output handling.`
      : `Write it as a function \`${task.entry.fn}\`, taking the same arguments in the same order and returning the same value. Do not write a main function or any input or output handling.`
    : "Write a complete program that reads standard input and writes standard output exactly as the Python program does.";
  const hint = typeHint(task.typed, task.language);
  const types = hint ? ` The tests call it with these ${target} types: ${hint}.` : "";
  return (
    `Translate the following Python solution of a programming problem into ${target}. ` +
    `Keep its algorithm and its time and space complexity. ${shape}${types} ` +
    `Reply with one \`\`\`${task.language} code block and nothing else.\n\n` +
    `Problem:\n${task.question}\n\nPython solution:\n\`\`\`python\n${task.code}\n\`\`\``
  );
}

export const TRANSLATION_REQUEST_VERSION = 2;

/** The translated code, or undefined when the answer holds no code in the language. */
export async function translateSolution(
  client: LlmClient,
  task: TranslationTask,
  signal: AbortSignal,
): Promise<{ code: string | undefined; answer: string }> {
  const result = await client.chat([{ role: "user", content: translationRequest(task) }], { signal });
  const block = extractMainCode(result.content, {
    language: task.language,
    ...(task.entry ? { entryPoint: task.entry.fn } : {}),
  });
  return { code: block?.code, answer: result.content };
}
