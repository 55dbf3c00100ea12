// One round of complexity scoring: the prompt with the query in it, one answer, the score read out
// of it. An answer without a readable score gets one follow-up turn with a reminder; if that one has
// none either, the round is unscored and keeps both raw answers. The prompt stays the paper's, word
// for word; a provider that can constrain sampling (the embedded model) is also given SCORE_GRAMMAR.
import type { PromptTemplate } from "../../pipeline/llm/prompts.js";
import type { ChatMessage, LlmClient } from "../../pipeline/llm/types.js";
import { criterionLabels, parseComplexityScore } from "./score-parser.js";

export interface RoundScore {
  /** 1-based */
  round: number;
  /** the prompt's name, e.g. complexity-1 */
  prompt: string;
  /** 1-5, or null when no answer had a readable score */
  score: number | null;
  /** the model's answer that gave the score (its explanation), or the last answer when none did */
  rationale: string;
  /** whether the score came from the answer to the reminder */
  reminded: boolean;
  /** both answers, when unscored */
  answers?: string[];
}

const labelsOf = new WeakMap<PromptTemplate, Map<string, number>>();

function labels(template: PromptTemplate): Map<string, number> {
  if (!labelsOf.has(template)) labelsOf.set(template, criterionLabels(template.text));
  return labelsOf.get(template)!;
}

/**
 * GBNF for "the score first, then explain why": a digit 1-5, then optionally a new line and the
 * explanation. The explanation may not open with what would make the score ambiguous to the parser
 * ("4\n- 5", "4\n3"); OpenAI-compatible servers are not sent it (see ChatOptions.grammar).
 */
export const SCORE_GRAMMAR = String.raw`root ::= [1-5] ( "\n" [^\x2D\u2013\u2014~/0-9 \t\r\n] [^\x00]* )?`;

/** What every scoring request asks besides its messages. */
export const SCORE_OPTIONS = { grammar: SCORE_GRAMMAR } as const;

export function complexityMessages(template: PromptTemplate, query: string): ChatMessage[] {
  return [{ role: "user", content: template.render({ query }) }];
}

export async function scoreComplexity(
  client: LlmClient,
  template: PromptTemplate,
  round: number,
  query: string,
  options: { reminder: string; signal?: AbortSignal },
): Promise<RoundScore> {
  const base = { round, prompt: template.name };
  const signal = { ...SCORE_OPTIONS, ...(options.signal ? { signal: options.signal } : {}) };
  const first = await client.chat(complexityMessages(template, query), signal);
  const parsed = parseComplexityScore(first.content, labels(template));
  if (parsed) return { ...base, score: parsed.score, rationale: first.content.trim(), reminded: false };
  const reminded: ChatMessage[] = [
    ...complexityMessages(template, query),
    { role: "assistant", content: first.content },
    { role: "user", content: options.reminder },
  ];
  const second = await client.chat(reminded, signal);
  const again = parseComplexityScore(second.content, labels(template));
  if (again) return { ...base, score: again.score, rationale: second.content.trim(), reminded: true };
  return {
    ...base,
    score: null,
    rationale: second.content.trim(),
    reminded: true,
    answers: [first.content, second.content],
  };
}

/** For the dry-run: the score of a cached first answer, without sending anything. */
export function scoreOfAnswer(template: PromptTemplate, answer: string): number | undefined {
  return parseComplexityScore(answer, labels(template))?.score;
}
