// `run leetcode --dry-run`: what the texts and translations would cost, before the sandbox or the
// model is asked anything. Grouping and follow-ups are planned, and the dialogues written, by the
// run's own code, against a judge that takes a solution the verdict cache knows nothing of to pass
// (so the figure is an upper bound on a first run) and a model that answers from the response cache
// or, where it has nothing, assumes an answer `completion_tokens` long.
import type { LanguageName } from "../../pipeline/code/languages.js";
import type { KeptGroup } from "../../pipeline/execution/index.js";
import type { ChatMessage, ChatResult, LlmClient, LlmEstimator } from "../../pipeline/llm/types.js";
import type { CostEstimate } from "../../pipeline/stage.js";
import { RequestTotals } from "../dialogue-kit/estimate.js";
import { type Writer, writeFollowUpDialogue, writeSimilarDialogue } from "./dialogues.js";
import type { FollowUpPlan } from "./follow-up.js";
import {
  type Judge,
  type Judged,
  type JudgeLimits,
  type JudgeTask,
  keptVerdicts,
  verdictKey,
} from "./judge.js";
import { EmptyTextError } from "./texts.js";
import type { ValidatedProblem } from "./validate-solutions.js";

/** A judge that runs nothing: the cached verdict, else `passed` (assumed, a translation's too), counted apart. */
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

/**
 * A client that sends nothing: the cached answer where there is one, else an assumed one, counted.
 * The assumed answer is a text of about `completionTokens` tokens (four characters a token), then
 * code as long in a fence of no language, which a translation takes as its code.
 */
class CountingClient implements LlmClient {
  readonly role: string;
  readonly model: string;
  readonly totals = new RequestTotals();
  cached = 0;
  private readonly assumed: string;

  constructor(
    private readonly estimator: LlmEstimator,
    private readonly completionTokens: number,
  ) {
    this.role = estimator.role;
    this.model = estimator.model;
    const filler = "word ".repeat(Math.ceil((completionTokens * 4) / 5)).trim();
    this.assumed = `${filler}\n\n\`\`\`\n${filler}\n\`\`\``;
  }

  async chat(messages: ChatMessage[]): Promise<ChatResult> {
    const e = this.estimator.estimate(messages, { expectedCompletionTokens: this.completionTokens });
    const hit = e.cached ? this.estimator.peek(messages) : undefined;
    if (hit) {
      this.cached++;
      return hit;
    }
    this.totals.add(e);
    const usage = { promptTokens: e.promptTokens, completionTokens: e.completionTokens };
    return { content: this.assumed, cached: false, model: this.model, finishReason: "stop", usage };
  }
}

/** The run's own dialogue writers against a judge that runs nothing: the counting client, with its counts. */
export async function estimateRequests(
  estimator: LlmEstimator,
  judge: Judge,
  groups: readonly (readonly ValidatedProblem[])[],
  plans: readonly FollowUpPlan[],
  options: { completionTokens: number; maxTests: number },
): Promise<CountingClient> {
  const client = new CountingClient(estimator, options.completionTokens);
  const w: Writer = { client, judge, maxTests: options.maxTests, signal: new AbortController().signal };
  // a cached empty text ends its dialogue, as in a run
  const write = (dialogue: () => Promise<unknown>) =>
    dialogue().catch((error: unknown) => {
      if (!(error instanceof EmptyTextError)) throw error;
    });
  for (const members of groups) await write(() => writeSimilarDialogue(w, members, []));
  for (const plan of plans) await write(() => writeFollowUpDialogue(w, plan));
  return client;
}

/** The dry run's figures, and the note that says how they were obtained. */
export function costEstimate(
  { totals, cached }: Pick<CountingClient, "totals" | "cached">,
  figures: { problems: number; assumed: number; groups: number; plans: number; completionTokens: number },
): CostEstimate {
  const n = (x: number) => x.toLocaleString("en-US");
  return totals.estimate(
    `${n(figures.groups)} similar-problem and ${n(figures.plans)} follow-up dialogues from ${n(figures.problems)} LeetCode problems` +
      (figures.assumed > 0
        ? `, ${n(figures.assumed)} solutions not yet run assumed to pass (an upper bound)`
        : "") +
      `; ${n(cached)} answers already cached; later turns assumed ${figures.completionTokens} tokens, translations assumed to pass`,
  );
}
