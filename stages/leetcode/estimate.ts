// `run leetcode --dry-run`: what the texts and translations would cost, before the sandbox or the
// model is asked anything. Which solutions pass is what the verdict cache says, and where it says
// nothing they are assumed to pass (so the figure is an upper bound on a first run); grouping and
// follow-ups are then planned as the run plans them. Each request is built as the run builds it,
// so one already answered is known from the response cache, and its answer makes the next request
// of its dialogue exact too; an unanswered one is assumed to be `completion_tokens` long, and every
// translation not answered yet is assumed to pass.
import { extractMainCode } from "../../pipeline/code/extract.js";
import type { LanguageName } from "../../pipeline/code/languages.js";
import type { KeptGroup } from "../../pipeline/execution/index.js";
import type { ChatMessage, LlmEstimator } from "../../pipeline/llm/types.js";
import type { CostEstimate } from "../../pipeline/stage.js";
import { problemText, typedQuestionOf } from "./dialogues.js";
import type { FollowUpPlan } from "./follow-up.js";
import {
  entryOf,
  type Judge,
  type Judged,
  type JudgeLimits,
  type JudgeTask,
  keptVerdicts,
  limitTests,
  verdictKey,
} from "./judge.js";
import { assistantAnswer, cleanText, renderTextPrompt } from "./texts.js";
import { translationRequest } from "./translate.js";
import type { ValidatedProblem } from "./validate-solutions.js";

/** A judge that runs nothing: the cached verdict, else `passed` (assumed), counted apart. */
export class AssumingJudge implements Judge {
  readonly computed = 0;
  reused = 0;
  assumed = 0;
  private readonly cache: KeptGroup<Judged>;

  constructor(
    verdictsDir: string,
    private readonly limits: JudgeLimits,
  ) {
    // reads only: a dry run writes nothing
    this.cache = keptVerdicts(verdictsDir);
  }

  async judge(task: JudgeTask, code: string, language: LanguageName): Promise<Judged> {
    const known = this.cache.get(verdictKey(task, code, language, this.limits));
    if (known) {
      this.reused++;
      return known;
    }
    this.assumed++;
    return { verdict: "passed", tests: 0, passed: 0 };
  }
}

interface Totals {
  requests: number;
  cached: number;
  promptTokens: number;
  completionTokens: number;
  costUsd: number;
}

/** One dialogue's requests in order. */
class DialogueEstimate {
  readonly messages: ChatMessage[] = [];

  constructor(
    private readonly estimator: LlmEstimator,
    private readonly totals: Totals,
    private readonly filler: string,
    private readonly completionTokens: number,
  ) {}

  /** The answer the request would get, where it is cached. */
  ask(prompt: string): string | undefined {
    const messages: ChatMessage[] = [{ role: "user", content: prompt }];
    const e = this.estimator.estimate(messages, { expectedCompletionTokens: this.completionTokens });
    const hit = e.cached ? this.estimator.peek(messages) : undefined;
    if (hit) {
      this.totals.cached++;
      return hit.content;
    }
    this.totals.requests++;
    this.totals.promptTokens += e.promptTokens;
    this.totals.completionTokens += e.completionTokens;
    this.totals.costUsd += e.costUsd;
    return undefined;
  }

  /** A turn: the text request, then the user's turn and the answer as the dialogue will hold them. */
  turn(user: string, code: string, tag: string): void {
    const answer = this.ask(renderTextPrompt(this.messages, user, code));
    const text = answer === undefined ? this.filler : cleanText(answer) || this.filler;
    this.messages.push(
      { role: "user", content: user },
      { role: "assistant", content: assistantAnswer(text, code, tag) },
    );
  }
}

export async function estimateRequests(
  estimator: LlmEstimator,
  judge: Judge,
  groups: readonly (readonly ValidatedProblem[])[],
  plans: readonly FollowUpPlan[],
  options: { completionTokens: number; maxTests: number },
): Promise<Totals> {
  const totals: Totals = { requests: 0, cached: 0, promptTokens: 0, completionTokens: 0, costUsd: 0 };
  // a turn of about `completionTokens` tokens (four characters a token)
  const filler = "word ".repeat(Math.ceil((options.completionTokens * 4) / 5)).trim();
  const dialogue = () => new DialogueEstimate(estimator, totals, filler, options.completionTokens);
  for (const members of groups) {
    const d = dialogue();
    for (const m of members) d.turn(problemText(m.problem), m.passing[0]!.code, "python");
  }
  for (const plan of plans) {
    const { problem } = plan.problem;
    const task = {
      problemId: problem.id,
      tests: limitTests(problem.tests, options.maxTests),
      starterCode: problem.starterCode,
    };
    const d = dialogue();
    d.turn(problemText(problem), plan.first.code, "python");
    let latest = plan.first.code;
    for (const step of plan.steps) {
      if (step.kind !== "language") {
        d.turn(step.question, step.solution.code, "python");
        latest = step.solution.code;
        continue;
      }
      const entry = entryOf(task, step.language);
      const answer = d.ask(
        translationRequest({
          question: problem.question,
          code: latest,
          language: step.language,
          entry,
          typed: typedQuestionOf(task),
        }),
      );
      if (answer === undefined) {
        d.turn(step.question, filler, step.language);
        continue;
      }
      // an answer at hand goes where the run takes it: no code or a failing one drops the turn
      const code = extractMainCode(answer, {
        language: step.language,
        ...(entry ? { entryPoint: entry.fn } : {}),
      })?.code;
      if (code === undefined) continue;
      if ((await judge.judge(task, code, step.language)).verdict !== "passed") continue;
      d.turn(step.question, code, step.language);
    }
  }
  return totals;
}

export function estimateNote(
  totals: Totals,
  figures: { problems: number; assumed: number; groups: number; plans: number; completionTokens: number },
): string {
  const n = (x: number) => x.toLocaleString("en-US");
  return (
    `${n(figures.groups)} similar-problem and ${n(figures.plans)} follow-up dialogues from ${n(figures.problems)} LeetCode problems` +
    (figures.assumed > 0
      ? `, ${n(figures.assumed)} solutions not yet run assumed to pass (an upper bound)`
      : "") +
    `; ${n(totals.cached)} answers already cached; later turns assumed ${figures.completionTokens} tokens, translations assumed to pass`
  );
}

export function costEstimate(totals: Totals, note: string): CostEstimate {
  return {
    requests: totals.requests,
    promptTokens: Math.round(totals.promptTokens),
    completionTokens: Math.round(totals.completionTokens),
    costUsd: totals.costUsd,
    note,
  };
}
