// The paper's LeetCode dialogues from TACO: similar problems merged by shared tags (303 instances) and
// follow-ups, solutions of one problem differing in complexity or language (200), with the strong
// model's text before each solution (prompts/leetcode-follow-up.md). Only solutions that pass their
// row's tests in the sandbox are used (their verdicts kept, so a restart runs nothing twice), and
// translations are judged before they are used.
import { createHash } from "node:crypto";
import path from "node:path";
import pLimit from "p-limit";
import type { LanguageName } from "../pipeline/code/languages.js";
import type { Dialogue } from "../pipeline/dialogue.js";
import { UserError } from "../pipeline/errors.js";
import { learnServerWorkers, programsAtOnce, SandboxOutageError } from "../pipeline/execution/index.js";
import { roleConfig } from "../pipeline/llm/config.js";
import { batchFailedReject, LlmAbortedError, LlmRequestError } from "../pipeline/llm/errors.js";
import { loadPrompt } from "../pipeline/llm/prompts.js";
import { roleFingerprint } from "../pipeline/llm/provider.js";
import { seededRandom, shuffleInPlace } from "../pipeline/random.js";
import type { PipelineRecord, Reject } from "../pipeline/record.js";
import { outputsStep } from "../pipeline/report/flow.js";
import { type CostEstimate, defineStage, type Emitter, type StageContext } from "../pipeline/stage.js";
import { type LeetcodeConfig, leetcodeConfigSchema } from "./leetcode/config.js";
import { type Writer, writeFollowUpDialogue, writeSimilarDialogue } from "./leetcode/dialogues.js";
import { AssumingJudge, costEstimate, estimateRequests } from "./leetcode/estimate.js";
import { type FollowUpPlan, planFollowUp } from "./leetcode/follow-up.js";
import { groupSimilarProblems } from "./leetcode/grouping.js";
import { cannotJudgeIn, limitTests, SolutionJudge } from "./leetcode/judge.js";
import { readProblems } from "./leetcode/read.js";
import {
  LEETCODE_METHODS,
  type LeetcodeStats,
  type LeetcodeSummary,
  leetcodeSummarySchema,
  summarizeLeetcode,
} from "./leetcode/summary.js";
import { EmptyTextError, TEXT_PROMPT } from "./leetcode/texts.js";
import { TRANSLATION_REQUEST_VERSION } from "./leetcode/translate.js";
import { type ValidatedProblem, validateSolutions } from "./leetcode/validate-solutions.js";

type LeetcodeContext = StageContext<LeetcodeConfig>;

/** A seed of its own per problem, so one problem's draws do not move when another one is added. */
function problemSeed(seed: number, id: string): number {
  return Number.parseInt(createHash("sha256").update(`${seed}\n${id}`).digest("hex").slice(0, 8), 16);
}

function groupSimilar(ctx: LeetcodeContext, validated: readonly ValidatedProblem[]) {
  const { similar } = ctx.config;
  const tagged = validated.map((v) => ({
    id: v.problem.id,
    tags: similar.tags.fields.flatMap((f) => (f === "tags" ? v.problem.tags : v.problem.skillTypes)),
  }));
  return groupSimilarProblems(tagged, {
    match: similar.tags.match,
    minShared: similar.tags.min_shared,
    ignore: similar.tags.ignore,
    sizes: similar.group_size,
    weights: similar.group_size_weights,
    target: similar.enabled ? similar.target : 0,
    seed: ctx.config.seed,
  });
}

function planFollowUps(ctx: LeetcodeContext, validated: readonly ValidatedProblem[]) {
  const { follow_up: config, seed, validation } = ctx.config;
  const order = shuffleInPlace([...validated], seededRandom(seed));
  const plans: FollowUpPlan[] = [];
  for (const v of order) {
    if (!config.enabled || plans.length >= config.target) break;
    const task = {
      problemId: v.problem.id,
      tests: limitTests(v.problem.tests, validation.max_tests),
      starterCode: v.problem.starterCode,
    };
    const languages = config.languages.filter(
      (l): l is LanguageName => l !== "python" && cannotJudgeIn(task, l) === undefined,
    );
    const plan = planFollowUp(v, config, languages, problemSeed(seed, v.problem.id));
    if (plan) plans.push(plan);
  }
  return plans;
}

const VERDICTS_DIR = "verdicts";

function judgeLimits(config: LeetcodeConfig) {
  return {
    runTimeoutS: config.validation.run_timeout_s,
    compileTimeoutS: config.validation.compile_timeout_s,
    memoryMb: config.validation.memory_mb,
  };
}

/**
 * What became of one dialogue: written, rejected (for its content, or a batch line the provider kept
 * failing), or failed for an operational reason.
 */
type Written =
  | { dialogue: Dialogue & PipelineRecord }
  | { reject: Reject }
  | { failed: string }
  | { nothing: true };

async function attempt(id: string, write: () => Promise<Written>): Promise<Written> {
  try {
    return await write();
  } catch (error) {
    if (error instanceof EmptyTextError)
      return { reject: { id, reason: "empty-text", detail: error.message } };
    if (error instanceof LlmRequestError) {
      const reject = batchFailedReject(error, id);
      return reject ? { reject } : { failed: `${id}: ${error.message}` };
    }
    if (error instanceof SandboxOutageError) return { failed: `${id}: ${error.message}` };
    throw error;
  }
}

/** One run of leetcode: what it counted, for the summary. */
interface LeetcodeRun {
  stats?: LeetcodeStats;
}

async function writeLeetcodeDialogues(ctx: LeetcodeContext, emit: Emitter, run: LeetcodeRun): Promise<void> {
  const { config } = ctx;
  const { problems, stats: read } = await readProblems(ctx, emit);
  if (ctx.signal.aborted) return;
  // asked before the sandbox work, so a missing endpoint is said at once
  const client = ctx.services.llm(config.role, ctx.usage);
  // with sandbox.url and no workers, the servers say theirs before the client is made; without
  // sandbox.workers the judge otherwise runs 2 programs at once
  if (config.validation.concurrency === undefined) await learnServerWorkers(ctx.root.sandbox, ctx.log);
  const judge = new SolutionJudge(
    ctx.services.sandbox(),
    path.join(ctx.workDir, VERDICTS_DIR),
    judgeLimits(config),
    ctx.signal,
    { sandbox_attempts: config.validation.sandbox_attempts },
  );
  const concurrency = programsAtOnce(config.validation.concurrency, ctx.root, 2);
  const checked = await validateSolutions(problems, judge, config.validation, concurrency, ctx.signal);
  if (ctx.signal.aborted) return;
  if (checked.sandboxErrors.length > 0) {
    throw new UserError(
      `leetcode: the sandbox failed on ${checked.sandboxErrors.length} solutions (e.g. ${checked.sandboxErrors[0]}); ` +
        "the verdicts it gave are kept in the work dir. Check `pnpm pipeline sandbox languages`, then run the same command again.",
      { exitCode: 1 },
    );
  }
  for (const reject of checked.rejects) await emit.reject(reject);
  const { validated } = checked;
  const grouping = groupSimilar(ctx, validated);
  const plans = planFollowUps(ctx, validated);
  ctx.log.info(
    `${validated.length} problems with a passing solution: ${grouping.groups.length} similar-problem groups, ` +
      `${plans.length} follow-up plans; writing the texts with the ${config.role} model`,
  );

  const writer: Writer = { client, judge, maxTests: config.validation.max_tests, signal: ctx.signal };
  const limit = pLimit(config.concurrency ?? roleConfig(ctx.root.llm, config.role)?.concurrency ?? 16);
  const stats: LeetcodeStats = {
    read,
    validation: checked.stats,
    similar: { ...grouping, groups: grouping.groups.length, rejected: 0 },
    follow_up: {
      planned: plans.length,
      translations: 0,
      translations_dropped: {},
      all_dropped: 0,
      rejected: 0,
    },
  };
  const similarJobs = grouping.groups.map((group) =>
    limit(() =>
      attempt(group.members.map((m) => validated[m]!.problem.id).join("+"), async () => ({
        dialogue: await writeSimilarDialogue(
          writer,
          group.members.map((m) => validated[m]!),
          group.shared,
        ),
      })),
    ),
  );
  const followUpJobs = plans.map((plan) =>
    limit(() =>
      attempt(plan.problem.problem.id, async () => {
        const written = await writeFollowUpDialogue(writer, plan);
        stats.follow_up.translations += written.translations;
        for (const d of written.dropped)
          stats.follow_up.translations_dropped[d.reason] =
            (stats.follow_up.translations_dropped[d.reason] ?? 0) + 1;
        if (written.dialogue) return { dialogue: written.dialogue };
        stats.follow_up.all_dropped++;
        return { nothing: true };
      }),
    ),
  );
  const [similarDone, followUpDone] = await Promise.all([
    Promise.allSettled(similarJobs),
    Promise.allSettled(followUpJobs),
  ]);
  if (ctx.signal.aborted) return;
  const failures: string[] = [];
  // emitted in plan order, so the parts read the same on every run
  for (const [kind, done] of [
    ["similar", similarDone],
    ["follow_up", followUpDone],
  ] as const) {
    for (const settled of done) {
      if (settled.status === "rejected") {
        if (settled.reason instanceof LlmAbortedError) return;
        throw settled.reason;
      }
      const written = settled.value;
      if ("dialogue" in written) await emit.out(written.dialogue);
      else if ("reject" in written) {
        stats[kind].rejected++;
        await emit.reject(written.reject);
      } else if ("failed" in written) failures.push(written.failed);
    }
  }
  if (failures.length > 0) {
    throw new UserError(
      `leetcode: ${failures.length} dialogues could not be written (e.g. ${failures[0]}); every answer and verdict ` +
        "obtained is cached, so run the same command again to retry only what is missing.",
      { exitCode: 1 },
    );
  }
  run.stats = stats;
}

/** `--dry-run`: the same reading and planning as a run, with cached verdicts (or passes assumed). */
async function estimateLeetcode(ctx: LeetcodeContext): Promise<CostEstimate> {
  if (!ctx.services.llmEstimator) {
    throw new Error("leetcode --dry-run: these services cannot estimate LLM requests (no llmEstimator)");
  }
  const { config } = ctx;
  const nothing = async () => {};
  const { problems } = await readProblems(ctx, { out: nothing, reject: nothing });
  const judge = new AssumingJudge(path.join(ctx.workDir, VERDICTS_DIR), judgeLimits(config));
  const { validated } = await validateSolutions(problems, judge, config.validation, 1, ctx.signal);
  // the solutions' (the note says apart that translations are assumed to pass)
  const assumed = judge.assumed;
  const grouping = groupSimilar(ctx, validated);
  const plans = planFollowUps(ctx, validated);
  const completionTokens = config.estimate.completion_tokens;
  const counted = await estimateRequests(
    ctx.services.llmEstimator(config.role),
    judge,
    grouping.groups.map((g) => g.members.map((m) => validated[m]!)),
    plans,
    { completionTokens, maxTests: config.validation.max_tests },
  );
  return costEstimate(counted, {
    problems: problems.length,
    assumed,
    groups: grouping.groups.length,
    plans: plans.length,
    completionTokens,
  });
}

export const leetcodeStage = defineStage<LeetcodeConfig, LeetcodeRun, LeetcodeSummary>({
  name: "leetcode",
  description: "similar-problem and follow-up dialogues from TACO's LeetCode problems (solutions run first)",
  methods: LEETCODE_METHODS,
  upstream: ["download"],
  // a dialogue method: `enabled: false` leaves it out, validate and export go on without it
  switchable: true,
  kind: "global",
  configSchema: leetcodeConfigSchema,
  fingerprint: ({ config, root, limit }) => ({
    role: roleFingerprint(root.llm, config.role),
    prompt: loadPrompt(TEXT_PROMPT).text,
    translation: TRANSLATION_REQUEST_VERSION,
    limit,
  }),
  open: () => ({}),
  run: writeLeetcodeDialogues,
  estimate: estimateLeetcode,
  summarize: async (ctx, run) => summarizeLeetcode(ctx, run.stats),
  summarySchema: leetcodeSummarySchema,
  report: {
    flow: outputsStep("leetcode dialogues"),
  },
});
