// The paper's query filtering: "we used Qwen-72B-Chat to rate each query on a scale of 1 to 5 based
// on its complexity and kept those rated 4 or 5; the filtering was repeated with a second prompt."
// Each record's query is scored by round 1; a survivor is scored by round 2; a record is kept when
// every round it went through said 4 or 5. Survivors carry their scores and the model's rationales;
// dropped records are rejects that carry them too (`pnpm pipeline cat filter --rejects`).
import { roleConfig } from "../pipeline/llm/config.js";
import { LlmAbortedError, LlmRequestError, unansweredOutcome } from "../pipeline/llm/errors.js";
import { loadPrompt, type PromptTemplate } from "../pipeline/llm/prompts.js";
import { chooseProvider } from "../pipeline/llm/provider.js";
import type { LlmClient } from "../pipeline/llm/types.js";
import type { PipelineRecord, RecordOutcome } from "../pipeline/record.js";
import { type CostEstimate, defineStage, type StageContext } from "../pipeline/stage.js";
import { RequestTotals } from "./dialogue-kit/estimate.js";
import {
  complexityMessages,
  type RoundScore,
  SCORE_GRAMMAR,
  SCORE_OPTIONS,
  scoreComplexity,
  scoreOfAnswer,
} from "./filter/complexity.js";
import { type FilterConfig, filterConfigSchema } from "./filter/config.js";
import { countFunnel, describeFunnel, type FilterSummary, filterSummarySchema } from "./filter/funnel.js";
import { filterReport } from "./filter/report.js";

type FilterContext = StageContext<FilterConfig>;

/** What one run of filter holds: one scorer client for all its records, and the rounds' prompts. */
export interface FilterRun {
  /** made at the first record, so a run with nothing to score never sets up a model */
  scorer(): LlmClient;
  templates: PromptTemplate[];
}

export function openFilter(ctx: FilterContext): FilterRun {
  let client: LlmClient | undefined;
  return {
    scorer: () => {
      client ??= ctx.services.llm(ctx.config.role, ctx.usage);
      return client;
    },
    templates: ctx.config.rounds.map((name) => loadPrompt(name)),
  };
}

// Providers word it differently; all of them mean the prompt does not fit the model's context.
const TOO_LONG = /context|too long|too many tokens|maximum.{0,40}length|max_tokens/i;

export async function filterRecord(
  record: PipelineRecord,
  ctx: FilterContext,
  run: FilterRun,
): Promise<RecordOutcome> {
  const { config } = ctx;
  const query = record.query;
  const reject = (reason: string, detail: string, kept: PipelineRecord = record): RecordOutcome => ({
    rejects: [{ id: record.id, reason, detail, record: kept }],
  });
  if (typeof query !== "string" || query.trim() === "")
    return reject("empty-query", "the record has no query text");
  const client = run.scorer();
  const { templates } = run;
  const options = { reminder: config.reminder, signal: ctx.signal };
  const scores: RoundScore[] = [];
  try {
    if (config.rule === "every") {
      scores.push(
        ...(await Promise.all(templates.map((t, i) => scoreComplexity(client, t, i + 1, query, options)))),
      );
    } else {
      for (const [i, template] of templates.entries()) {
        const score = await scoreComplexity(client, template, i + 1, query, options);
        scores.push(score);
        if (score.score === null || score.score < config.threshold) break;
      }
    }
  } catch (error) {
    if (error instanceof LlmRequestError) {
      if (error.last.kind === "bad-request" && TOO_LONG.test(error.last.message))
        return reject("query-too-long", error.message, { ...record });
      return unansweredOutcome(error, record);
    }
    if (error instanceof LlmAbortedError) return { failed: { reason: "interrupted", detail: error.message } };
    // A UserError (no endpoint, key refused) stops the run; anything else is a bug worth seeing.
    throw error;
  }
  const scored: PipelineRecord = { ...record, complexity: scores };
  const verdict = judge(scores, config.threshold);
  return verdict ? reject(verdict.reason, verdict.detail, scored) : { out: [scored] };
}

function judge(scores: RoundScore[], threshold: number): { reason: string; detail: string } | undefined {
  const said = scores.map((s) => `round ${s.round} (${s.prompt}): ${s.score ?? "unscored"}`).join(", ");
  const unscored = scores.find((s) => s.score === null);
  if (unscored) {
    const raw = (unscored.answers ?? []).map((a) =>
      JSON.stringify(a.length > 300 ? `${a.slice(0, 300)}...` : a),
    );
    return {
      reason: "unscored",
      detail: `${said}; no score 1-5 in the answer, even after a reminder: ${raw.join(" / ")}`,
    };
  }
  if (scores.some((s) => (s.score ?? 0) < threshold)) {
    return { reason: "complexity-below-threshold", detail: `${said}; threshold ${threshold}` };
  }
  return undefined;
}

async function estimateFilter(
  ctx: FilterContext,
  input: AsyncIterable<PipelineRecord>,
): Promise<CostEstimate> {
  const { config } = ctx;
  if (!ctx.services.llmEstimator) {
    throw new Error("filter --dry-run: these services cannot estimate LLM requests (no llmEstimator)");
  }
  // No endpoint needed: a dry-run is how one finds out what a run would cost before configuring one,
  // and the cache key (model, messages, sampling) is known from the config alone.
  const estimator = ctx.services.llmEstimator(config.role);
  const templates = config.rounds.map((name) => loadPrompt(name));
  const options = { ...SCORE_OPTIONS, expectedCompletionTokens: config.estimate.completion_tokens };
  const totals = new RequestTotals();
  let records = 0;
  let cached = 0;
  for await (const record of input) {
    const query = record.query;
    if (typeof query !== "string" || query.trim() === "") continue;
    records++;
    // The chance that this record reaches the round: known from cached answers, assumed otherwise.
    let reach = 1;
    for (const template of templates) {
      const messages = complexityMessages(template, query);
      const e = estimator.estimate(messages, options);
      if (e.cached) cached++;
      else totals.add(e, reach);
      if (config.rule === "sequential") {
        const hit = estimator.peek(messages, SCORE_OPTIONS);
        const score = hit ? scoreOfAnswer(template, hit.content) : undefined;
        reach *= score === undefined ? config.estimate.pass_rate : score >= config.threshold ? 1 : 0;
        if (reach === 0) break;
      }
    }
  }
  const rounds = templates.length;
  const assumption =
    config.rule === "sequential" && rounds > 1
      ? `, ${Math.round(config.estimate.pass_rate * 100)}% assumed to pass each round where no cached answer says`
      : "";
  return totals.estimate(
    `${rounds} round${rounds === 1 ? "" : "s"} (${config.rule}) over ${records.toLocaleString("en-US")} records` +
      `${assumption}; ${cached.toLocaleString("en-US")} answers already cached`,
  );
}

export const filterStage = defineStage<FilterConfig, FilterRun, FilterSummary>({
  kind: "record",
  name: "filter",
  description: "rates each query's complexity (1-5) with the scorer LLM, twice, and keeps 4-5",
  upstream: ["dedup"],
  configSchema: filterConfigSchema,
  fingerprint: ({ config, root }) => {
    const role = roleConfig(root.llm, config.role);
    const base = {
      model: role?.model,
      sampling: role?.sampling,
      prompts: config.rounds.map((name) => loadPrompt(name).text),
    };
    if (!role) return base;
    // The model that answers depends on the provider the role resolves to (an endpoint in the
    // environment switches it); the embedded one also answers under the score grammar.
    const choice = chooseProvider(root.llm, config.role, process.env);
    return choice.provider === "embedded"
      ? { ...base, model: choice.model, provider: choice.provider, grammar: SCORE_GRAMMAR }
      : base;
  },
  // Twice the role's request limit: records waiting for a slot keep the endpoint busy, while answers
  // from the cache need no slot at all.
  concurrency: (ctx) =>
    ctx.config.concurrency ?? 2 * (roleConfig(ctx.root.llm, ctx.config.role)?.concurrency ?? 16),
  open: openFilter,
  process: filterRecord,
  estimate: estimateFilter,
  async summarize(ctx) {
    const funnel = await countFunnel(ctx);
    for (const line of describeFunnel(funnel)) ctx.log.info(line);
    return funnel;
  },
  summarySchema: filterSummarySchema,
  report: filterReport,
});
