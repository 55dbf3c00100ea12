// Step 4 of BabelCode through our sandbox: each prediction goes into its question's program, runs
// as one request (all test cases in one program, so compiled languages compile once), and is judged
// from the `TEST-` lines it prints. Predictions, and AutoEval's and CommonOJ's answers, run
// concurrently, up to the sandbox's workers.
import pLimit from "p-limit";
import { definesEntryPoint } from "../code/extract.js";
import { removeMain } from "../code/strip-main.js";
import { callSandbox } from "../sandbox/call.js";
import type { CodeRunner } from "../sandbox/types.js";
import type { FusionAnswer } from "./fusion-data.js";
import { fillProgram, harnessFor } from "./harness/index.js";
import { type NamingConvention, styleName } from "./harness/naming.js";
import { judgePrediction } from "./outcome.js";
import { type RunLimits, rawResult } from "./raw-result.js";
import { EvalInputError, type GeneratedTest, type Prediction, type PredictionResult } from "./types.js";

/** Generated tests by language, then by question id (as read by readTestDir). */
export type TestIndex = ReadonlyMap<string, ReadonlyMap<string, GeneratedTest>>;

export interface RunHooks {
  /** predictions in flight at once; keep it at or below the sandbox's workers */
  concurrency?: number;
  /** called once before running, with how many predictions will run (unmatched ones do not) */
  onStart?: (total: number) => void;
  /** called once per finished prediction, in completion order (for progress bars) */
  onResult?: (result: PredictionResult) => void;
}

export interface EvaluationRun {
  /** one per matched prediction, in input order */
  results: PredictionResult[];
  /** predictions whose question has no test (in their language, for BabelCode's) */
  unmatched: Array<{ qid: string; id: string; language?: string }>;
}

/** Every job through `run`, `concurrency` at a time; results in the jobs' order. */
async function runJobs<J>(
  jobs: readonly J[],
  run: (job: J) => Promise<PredictionResult>,
  hooks: RunHooks,
): Promise<PredictionResult[]> {
  hooks.onStart?.(jobs.length);
  const limit = pLimit(Math.max(1, hooks.concurrency ?? 2));
  return Promise.all(
    jobs.map((job) =>
      limit(async () => {
        const result = await run(job);
        hooks.onResult?.(result);
        return result;
      }),
    ),
  );
}

interface Job {
  prediction: Prediction;
  test: GeneratedTest;
  fn: string;
  cls: string | undefined;
}

/** Pairs predictions with their tests; throws EvalInputError if one has no entry function to call. */
function planJobs(
  predictions: readonly Prediction[],
  tests: TestIndex,
): { jobs: Job[]; unmatched: EvaluationRun["unmatched"] } {
  const jobs: Job[] = [];
  const unmatched: EvaluationRun["unmatched"] = [];
  const nameless: string[] = [];
  for (const prediction of predictions) {
    const test = tests.get(prediction.language)?.get(prediction.qid);
    if (!test) {
      unmatched.push({ qid: prediction.qid, id: prediction.id, language: prediction.language });
      continue;
    }
    const fn = prediction.entry_fn_name ?? entryNameIn(prediction.code, test.entry_fn_name);
    if (!fn) {
      nameless.push(`${prediction.language} question ${prediction.qid} prediction ${prediction.id}`);
      continue;
    }
    const harness = harnessFor(prediction.language);
    const cls = harness?.requiresClass
      ? (prediction.entry_cls_name ?? test.entry_cls_name)
      : prediction.entry_cls_name;
    jobs.push({ prediction, test, fn, cls });
  }
  if (nameless.length > 0) {
    throw new EvalInputError(
      `${nameless.length} predictions name no entry function and their question has no entry_fn_name (first: ${nameless[0]}). Add "entry_fn_name" to the predictions or the questions.`,
    );
  }
  return { jobs, unmatched };
}

/** The program a prediction runs as, and whether its own main had to go. */
export function buildProgram(job: Job): { program: string; mainRemoved: boolean } {
  const harness = harnessFor(job.prediction.language);
  if (!harness) throw new Error(`no harness for ${job.prediction.language}`);
  const stripped = removeMain(job.prediction.code, job.prediction.language);
  return {
    program: fillProgram(harness, job.test.test_code, stripped.code, job.fn, job.cls),
    mainRemoved: stripped.removed,
  };
}

const CONVENTIONS: readonly NamingConvention[] = ["snake", "camel", "pascal"];

/**
 * The entry function to call when a prediction names none: the test's (BabelCode's styled name),
 * unless the code defines only another style of it (the question's own spelling, say).
 */
function entryNameIn(code: string, name: string | undefined): string | undefined {
  if (!name || definesEntryPoint(code, name)) return name;
  const other = CONVENTIONS.map((c) => styleName(name, c)).find((n) => definesEntryPoint(code, n));
  return other ?? name;
}

async function runOne(runner: CodeRunner, job: Job, options: RunLimits): Promise<PredictionResult> {
  const { program, mainRemoved } = buildProgram(job);
  const call = await callSandbox(runner, { code: program, language: job.test.sandbox_language }, options);
  const judgement = judgePrediction(call.response, job.test.test_case_ids);
  const result = rawResult(call, job.prediction, options);
  result.outcome = judgement.outcome;
  if (judgement.reason !== undefined) result.reason = judgement.reason;
  result.test_results = judgement.test_results;
  result.num_tests = job.test.test_case_ids.length;
  result.num_passed = judgement.num_passed;
  result.main_removed = mainRemoved;
  return result;
}

/** Runs every prediction that has a generated test; results come back in input order. */
export async function evaluatePredictions(
  runner: CodeRunner,
  predictions: readonly Prediction[],
  tests: TestIndex,
  options: RunLimits & RunHooks = {},
): Promise<EvaluationRun> {
  const { jobs, unmatched } = planJobs(predictions, tests);
  return { results: await runJobs(jobs, (job) => runOne(runner, job, options), options), unmatched };
}

/** Runs every answer against its problem (AutoEval, CommonOJ) with `evaluate`; input order kept. */
export async function evaluateAnswers<P>(
  problems: Map<string, P>,
  answers: readonly FusionAnswer[],
  evaluate: (problem: P, answer: FusionAnswer) => Promise<PredictionResult>,
  hooks: RunHooks = {},
): Promise<EvaluationRun> {
  const unmatched: EvaluationRun["unmatched"] = [];
  const matched: Array<{ problem: P; answer: FusionAnswer }> = [];
  for (const answer of answers) {
    const problem = problems.get(answer.qid);
    if (problem === undefined) unmatched.push({ qid: answer.qid, id: answer.id });
    else matched.push({ problem, answer });
  }
  return { results: await runJobs(matched, (m) => evaluate(m.problem, m.answer), hooks), unmatched };
}
