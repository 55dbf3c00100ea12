// Step 4 of BabelCode through our sandbox: each prediction goes into its question's program, runs
// as one request (all test cases in one program, so compiled languages compile once), and is judged
// from the `TEST-` lines it prints. Predictions run concurrently, up to the sandbox's workers.
import pLimit from "p-limit";
import { removeMain } from "../code/strip-main.js";
import type { CodeRunner, RunCodeRequest, RunCodeResponse } from "../sandbox/types.js";
import { fillProgram, harnessFor } from "./harness/index.js";
import { judgePrediction } from "./outcome.js";
import { EvalInputError, type GeneratedTest, type Prediction, type PredictionResult } from "./types.js";

/** Generated tests by language, then by question id (as read by readTestDir). */
export type TestIndex = ReadonlyMap<string, ReadonlyMap<string, GeneratedTest>>;

export interface EvaluateOptions {
  /** predictions in flight at once; keep it at or below the sandbox's workers */
  concurrency?: number;
  /** seconds; the sandbox's defaults apply when unset */
  compileTimeoutS?: number;
  runTimeoutS?: number;
  memoryMb?: number;
  /** called once before running, with how many predictions will run (unmatched ones do not) */
  onStart?: (total: number) => void;
  /** called once per finished prediction, in completion order (for progress bars) */
  onResult?: (result: PredictionResult) => void;
  signal?: AbortSignal;
}

export interface EvaluationRun {
  /** one per matched prediction, in input order */
  results: PredictionResult[];
  /** predictions whose question has no generated test in their language */
  unmatched: Array<{ qid: string; id: string; language: string }>;
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
    const fn = prediction.entry_fn_name ?? test.entry_fn_name;
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

async function runOne(runner: CodeRunner, job: Job, options: EvaluateOptions): Promise<PredictionResult> {
  const { program, mainRemoved } = buildProgram(job);
  const request: RunCodeRequest = { code: program, language: job.test.sandbox_language };
  if (options.compileTimeoutS !== undefined) request.compile_timeout = options.compileTimeoutS;
  if (options.runTimeoutS !== undefined) request.run_timeout = options.runTimeoutS;
  if (options.memoryMb !== undefined) request.memory_limit_MB = options.memoryMb;
  const started = performance.now();
  let response: RunCodeResponse;
  try {
    response = await runner.run(request, options.signal ? { signal: options.signal } : undefined);
  } catch (error) {
    if (options.signal?.aborted) throw error;
    // A runner that throws (remote server down, sandbox closed) is a sandbox error for this prediction.
    response = {
      status: "SandboxError",
      message: (error as Error).message,
      compile_result: null,
      run_result: null,
      files: {},
    };
  }
  const elapsed_s = (performance.now() - started) / 1000;
  const judgement = judgePrediction(response, job.test.test_case_ids);
  const { compile_result: compile, run_result: run } = response;
  const result: PredictionResult = {
    qid: job.prediction.qid,
    id: job.prediction.id,
    language: job.prediction.language,
    outcome: judgement.outcome,
    test_results: judgement.test_results,
    num_tests: job.test.test_case_ids.length,
    num_passed: judgement.num_passed,
    sandbox_status: response.status,
    commands: [],
    stdout: run?.stdout ?? "",
    stderr: run?.stderr ?? "",
    main_removed: mainRemoved,
    elapsed_s: Math.round(elapsed_s * 1000) / 1000,
    code: program,
  };
  if (judgement.reason !== undefined) result.reason = judgement.reason;
  if (response.message) result.sandbox_message = response.message;
  for (const [step, command] of [
    ["compile", compile],
    ["run", run],
  ] as const) {
    if (!command) continue;
    result.commands.push({
      step,
      status: command.status,
      return_code: command.return_code,
      execution_time: command.execution_time,
      peak_memory_kb: command.peak_memory_kb ?? null,
    });
  }
  if (compile?.stderr) result.compile_stderr = compile.stderr;
  return result;
}

/** Runs every prediction that has a generated test; results come back in input order. */
export async function evaluatePredictions(
  runner: CodeRunner,
  predictions: readonly Prediction[],
  tests: TestIndex,
  options: EvaluateOptions = {},
): Promise<EvaluationRun> {
  const { jobs, unmatched } = planJobs(predictions, tests);
  options.onStart?.(jobs.length);
  const limit = pLimit(Math.max(1, options.concurrency ?? 2));
  const results = await Promise.all(
    jobs.map((job) =>
      limit(async () => {
        const result = await runOne(runner, job, options);
        options.onResult?.(result);
        return result;
      }),
    ),
  );
  return { results, unmatched };
}
