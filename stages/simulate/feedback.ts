// The paper's simulated human feedback: the strong model, under the feedback prompt (a user who
// comments on the latest code, in one of ten ways), reads the conversation so far and answers
// `{satisfied, not_satisfied, feedback}`. The answer is read leniently (json-answer.ts); one that is
// still not a JSON object with a feedback text is asked once more with a reminder, and then the
// dialogue is rejected. Only the feedback text goes on into the dialogue, as the user's next turn.
import type { PromptTemplate } from "../../pipeline/llm/prompts.js";
import type { ChatMessage, LlmClient } from "../../pipeline/llm/types.js";
import { parseJsonAnswer, textField } from "../dialogue-kit/json-answer.js";
import { DialogueRejected } from "../dialogue-kit/outcome.js";
import { categoryOfText, type FeedbackCategory, namedCategory } from "./categories.js";

export interface SimulatedFeedback {
  feedback: string;
  satisfied: string;
  not_satisfied: string;
  category: FeedbackCategory;
  /** `model`: the answer named it; `words`: read from the feedback's words */
  category_source: "model" | "words";
  /** the reviewer needed the JSON reminder */
  reminded: boolean;
  model: string;
}

/** The conversation as the reviewer reads it: every turn after the system prompt, labelled. */
export function transcript(messages: readonly ChatMessage[]): string {
  return messages
    .filter((m) => m.role !== "system")
    .map((m) => `${m.role === "user" ? "USER" : "ASSISTANT"}:\n${m.content}`)
    .join("\n\n");
}

export function reviewerMessages(
  prompt: PromptTemplate,
  request: string,
  messages: readonly ChatMessage[],
): ChatMessage[] {
  return [
    { role: "system", content: prompt.render({}) },
    { role: "user", content: request.replace("{conversation}", () => transcript(messages)) },
  ];
}

type Reading =
  | { ok: true; value: Omit<SimulatedFeedback, "reminded" | "model"> }
  | { ok: false; error: string };

export function readFeedback(answer: string): Reading {
  const parsed = parseJsonAnswer(answer);
  if (!parsed.ok) return parsed;
  const feedback = textField(parsed.value, "feedback");
  if (!feedback) return { ok: false, error: "the JSON object has no non-empty `feedback` text" };
  const satisfied = textField(parsed.value, "satisfied") ?? "";
  const not_satisfied = textField(parsed.value, "not_satisfied") ?? "";
  const named = namedCategory(parsed.value.category ?? parsed.value.type ?? parsed.value.feedback_type);
  const category = named ?? categoryOfText(feedback, not_satisfied);
  return {
    ok: true,
    value: { feedback, satisfied, not_satisfied, category, category_source: named ? "model" : "words" },
  };
}

export async function simulateHumanFeedback(
  reviewer: LlmClient,
  prompt: PromptTemplate,
  options: { request: string; reminder: string; signal?: AbortSignal },
  messages: readonly ChatMessage[],
): Promise<SimulatedFeedback> {
  const signal = options.signal ? { signal: options.signal } : {};
  const asked = reviewerMessages(prompt, options.request, messages);
  const first = await reviewer.chat(asked, signal);
  const reading = readFeedback(first.content);
  if (reading.ok) return { ...reading.value, reminded: false, model: first.model };
  const again = await reviewer.chat(
    [...asked, { role: "assistant", content: first.content }, { role: "user", content: options.reminder }],
    signal,
  );
  const second = readFeedback(again.content);
  if (second.ok) return { ...second.value, reminded: true, model: again.model };
  throw new DialogueRejected(
    "unparseable-feedback",
    `the reviewer's feedback was not a JSON object with a feedback text, twice (${reading.error}; then ${second.error}): ` +
      `${JSON.stringify(clip(first.content))} / ${JSON.stringify(clip(again.content))}`,
  );
}

const clip = (s: string) => (s.length > 300 ? `${s.slice(0, 300)}...` : s);
