// `run --dry-run` for a dialogue stage: what its requests would cost before any is sent. The first
// request of each dialogue is known exactly (a system prompt and the query), so the cache can say
// whether it is answered already; the later ones depend on answers nobody has yet, so they are
// estimated as the same conversation grown by `completion_tokens`-sized turns, per the stage's plan.
import type { ChatMessage, LlmEstimator, RequestEstimate } from "../../pipeline/llm/types.js";
import type { PipelineRecord } from "../../pipeline/record.js";
import type { CostEstimate, StageContext } from "../../pipeline/stage.js";

/** The requests a dry run would send (a cached answer is not sent), with their tokens and cost. */
export class RequestTotals {
  requests = 0;
  promptTokens = 0;
  completionTokens = 0;
  costUsd = 0;

  /** `share`: the chance that the request is sent at all (filter's later rounds) */
  add(e: RequestEstimate, share = 1): void {
    this.requests += share;
    this.promptTokens += share * e.promptTokens;
    this.completionTokens += share * e.completionTokens;
    this.costUsd += share * e.costUsd;
  }

  /** The totals as a stage's dry run reports them, with the note that says how they were obtained. */
  estimate(note: string): CostEstimate {
    return {
      requests: Math.round(this.requests),
      promptTokens: Math.round(this.promptTokens),
      completionTokens: Math.round(this.completionTokens),
      costUsd: this.costUsd,
      note,
    };
  }
}

export interface LaterRequest {
  role: string;
  /** turns (answers and results) the conversation holds beyond the first request's */
  grownBy: number;
}

/** The requests of one dialogue as a dry run sees them. */
export interface DialoguePlan {
  firstRole: string;
  first(record: PipelineRecord): ChatMessage[];
  later: readonly LaterRequest[];
  completionTokens: number;
  /** the note's words after "N requests each", e.g. "(a logical error adds a check request)" */
  what: string;
}

export async function estimateDialogues(
  ctx: StageContext<unknown>,
  records: AsyncIterable<PipelineRecord>,
  plan: DialoguePlan,
): Promise<CostEstimate> {
  if (!ctx.services.llmEstimator) {
    throw new Error(`${ctx.name} --dry-run: these services cannot estimate LLM requests (no llmEstimator)`);
  }
  const estimators = new Map<string, LlmEstimator>();
  const estimator = (role: string) => {
    if (!estimators.has(role)) estimators.set(role, ctx.services.llmEstimator!(role));
    return estimators.get(role)!;
  };
  const options = { expectedCompletionTokens: plan.completionTokens };
  // A turn of about `completionTokens` tokens (four characters a token).
  const filler = "word ".repeat(Math.ceil((plan.completionTokens * 4) / 5));
  const totals = new RequestTotals();
  let dialogues = 0;
  let cached = 0;
  for await (const record of records) {
    dialogues++;
    const first = plan.first(record);
    const e = estimator(plan.firstRole).estimate(first, options);
    if (e.cached) cached++;
    else totals.add(e);
    for (const later of plan.later) {
      const grown: ChatMessage[] = [...first];
      for (let i = 0; i < later.grownBy; i++) {
        grown.push({ role: i % 2 === 0 ? "assistant" : "user", content: filler });
      }
      if (grown.at(-1)!.role === "assistant") grown.push({ role: "user", content: filler });
      // counted even where cached: the conversation is a stand-in, not what the run will send
      totals.add(estimator(later.role).estimate(grown, options));
    }
  }
  return totals.estimate(
    `${dialogues.toLocaleString("en-US")} dialogues, ${1 + plan.later.length} requests each ${plan.what}; ${cached.toLocaleString("en-US")} first answers ` +
      `already cached; later requests assumed to grow by ${plan.completionTokens}-token turns`,
  );
}
