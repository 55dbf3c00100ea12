// Writing the two kinds of LeetCode dialogue once their problems, solutions and follow-ups are
// chosen: each user turn is a problem (or a follow-up question), each answer the strong model's text
// followed by a solution that passed the problem's tests, its code untouched.
import { type Dialogue, makeDialogue } from "../../pipeline/dialogue.js";
import type { ChatMessage, LlmClient } from "../../pipeline/llm/types.js";
import type { PipelineRecord } from "../../pipeline/record.js";
import type { FollowUpPlan } from "./follow-up.js";
import { entryOf, type Judge, limitTests, typedQuestionOf } from "./judge.js";
import { LEETCODE_FOLLOW_UP, LEETCODE_SIMILAR_PROBLEM } from "./summary.js";
import type { TacoProblem } from "./taco.js";
import { assistantAnswer, fenced, writeTextBeforeCode } from "./texts.js";
import { translateSolution } from "./translate.js";
import type { ValidatedProblem } from "./validate-solutions.js";

export interface Writer {
  client: LlmClient;
  judge: Judge;
  maxTests: number;
  signal: AbortSignal;
}

/** The user's turn for a problem: TACO's statement, and LeetCode's starter code when there is one. */
function problemText(problem: TacoProblem): string {
  const starter = problem.starterCode.trim();
  return starter
    ? `${problem.question.trimEnd()}\n\n${fenced(problem.starterCode.trimEnd(), "python")}`
    : problem.question;
}

function about(problem: TacoProblem) {
  return {
    id: problem.id,
    name: problem.name,
    url: problem.url,
    difficulty: problem.difficulty,
    tags: problem.tags,
    tests: problem.tests.style,
  };
}

async function answerTurn(
  w: Writer,
  messages: ChatMessage[],
  user: string,
  code: string,
  tag: string,
): Promise<void> {
  const text = await writeTextBeforeCode(w.client, messages, user, code, w.signal);
  messages.push(
    { role: "user", content: user },
    { role: "assistant", content: assistantAnswer(text, code, tag) },
  );
}

export async function writeSimilarDialogue(
  w: Writer,
  members: readonly ValidatedProblem[],
  shared: readonly string[],
): Promise<Dialogue & PipelineRecord> {
  const messages: ChatMessage[] = [];
  for (const member of members) {
    await answerTurn(w, messages, problemText(member.problem), member.passing[0]!.code, "python");
  }
  return makeDialogue({
    method: LEETCODE_SIMILAR_PROBLEM,
    sources: members.map((m) => m.problem.id),
    messages,
    lang: "python",
    meta: {
      problems: members.map((m) => ({ ...about(m.problem), solution: m.passing[0]!.index })),
      shared_tags: shared,
      model: w.client.model,
    },
  });
}

export interface DroppedStep {
  kind: "language";
  language: string;
  reason: "no-code" | "failed-tests";
  detail: string;
}

/** A follow-up dialogue, or undefined when every follow-up was dropped (translations that failed). */
export async function writeFollowUpDialogue(
  w: Writer,
  plan: FollowUpPlan,
): Promise<{
  dialogue: (Dialogue & PipelineRecord) | undefined;
  dropped: DroppedStep[];
  translations: number;
}> {
  const { problem } = plan.problem;
  const task = {
    problemId: problem.id,
    tests: limitTests(problem.tests, w.maxTests),
    starterCode: problem.starterCode,
  };
  const question = typedQuestionOf(task);
  const messages: ChatMessage[] = [];
  await answerTurn(w, messages, problemText(problem), plan.first.code, "python");
  let latest = plan.first.code;
  const kept: Record<string, unknown>[] = [];
  const dropped: DroppedStep[] = [];
  let translations = 0;
  for (const step of plan.steps) {
    if (step.kind !== "language") {
      await answerTurn(w, messages, step.question, step.solution.code, "python");
      latest = step.solution.code;
      kept.push({ kind: step.kind, solution: step.solution.index });
      continue;
    }
    const entry = entryOf(task, step.language);
    translations++;
    const translated = await translateSolution(
      w.client,
      {
        question: problem.question,
        code: latest,
        language: step.language,
        entry,
        typed: "error" in question ? undefined : question,
      },
      w.signal,
    );
    if (translated.code === undefined) {
      dropped.push({
        kind: "language",
        language: step.language,
        reason: "no-code",
        detail: `no ${step.language} code in the answer: ${JSON.stringify(translated.answer.slice(0, 200))}`,
      });
      continue;
    }
    const judged = await w.judge.judge(task, translated.code, step.language);
    if (judged.verdict !== "passed") {
      dropped.push({
        kind: "language",
        language: step.language,
        reason: "failed-tests",
        detail: `${judged.verdict}: ${judged.detail ?? ""}`.trim(),
      });
      continue;
    }
    await answerTurn(w, messages, step.question, translated.code, step.language);
    kept.push({ kind: "language", language: step.language, tests: judged.tests });
  }
  if (kept.length === 0) return { dialogue: undefined, dropped, translations };
  const variant = kept
    .map((k) => (k.kind === "language" ? (k.language as string) : (k.kind as string)))
    .join("+");
  return {
    dialogue: makeDialogue({
      method: LEETCODE_FOLLOW_UP,
      variant,
      sources: [problem.id],
      messages,
      lang: "python",
      meta: {
        problem: about(problem),
        expected_time_complexity: problem.expectedTime ?? null,
        expected_auxiliary_space: problem.expectedSpace ?? null,
        first_solution: plan.first.index,
        follow_ups: kept,
        dropped,
        model: w.client.model,
      },
    }),
    dropped,
    translations,
  };
}
