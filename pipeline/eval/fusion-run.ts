// Running SandboxFusion-style answers through a CodeRunner: one request with the caller's limits,
// the raw record of what happened, and the batch loop shared by AutoEval and CommonOJ.
import pLimit from "p-limit";
import type { LanguageName } from "../code/languages.js";
import type { CodeRunner, RunCodeRequest, RunCodeResponse } from "../sandbox/types.js";
import type { FusionAnswer } from "./fusion-data.js";
import type { PredictionResult } from "./types.js";

export interface FusionRunOptions {
  /** seconds; SandboxFusion's defaults for these dataset types are 40 (compile) and 20 (run) */
  compileTimeoutS?: number;
  runTimeoutS?: number;
  memoryMb?: number;
  signal?: AbortSignal;
}

export async function runRequest(
  runner: CodeRunner,
  request: RunCodeRequest,
  options: FusionRunOptions,
): Promise<{ response: RunCodeResponse; elapsed_s: number }> {
  const withLimits: RunCodeRequest = { ...request };
  if (options.compileTimeoutS !== undefined) withLimits.compile_timeout = options.compileTimeoutS;
  if (options.runTimeoutS !== undefined) withLimits.run_timeout = options.runTimeoutS;
  if (options.memoryMb !== undefined) withLimits.memory_limit_MB = options.memoryMb;
  const started = performance.now();
  let response: RunCodeResponse;
  try {
    response = await runner.run(withLimits, options.signal ? { signal: options.signal } : undefined);
  } catch (error) {
    if (options.signal?.aborted) throw error;
    response = {
      status: "SandboxError",
      message: (error as Error).message,
      compile_result: null,
      run_result: null,
      files: {},
    };
  }
  return { response, elapsed_s: Math.round(performance.now() - started) / 1000 };
}

/** The raw record of one run; the caller fills in the outcome and the test results. */
export function resultFromResponse(
  answer: FusionAnswer,
  language: LanguageName,
  response: RunCodeResponse,
  program: string,
  elapsed_s: number,
): PredictionResult {
  const result: PredictionResult = {
    qid: answer.qid,
    id: answer.id,
    language,
    outcome: "Had Error",
    test_results: {},
    num_tests: 0,
    num_passed: 0,
    sandbox_status: response.status,
    commands: [],
    stdout: response.run_result?.stdout ?? "",
    stderr: response.run_result?.stderr ?? "",
    main_removed: false,
    elapsed_s,
    code: program,
  };
  if (response.message) result.sandbox_message = response.message;
  for (const [step, command] of [
    ["compile", response.compile_result],
    ["run", response.run_result],
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
  if (response.compile_result?.stderr) result.compile_stderr = response.compile_result.stderr;
  return result;
}

export interface FusionBatch<P> {
  results: PredictionResult[];
  /** answers whose problem id is not in the dataset */
  unmatched: Array<{ qid: string; id: string }>;
  problems: Map<string, P>;
}

/** Runs every answer against its problem with `evaluate`, `concurrency` at a time; input order kept. */
export async function evaluateAnswers<P>(
  problems: Map<string, P>,
  answers: readonly FusionAnswer[],
  evaluate: (problem: P, answer: FusionAnswer) => Promise<PredictionResult>,
  options: {
    concurrency?: number;
    onStart?: (total: number) => void;
    onResult?: (result: PredictionResult) => void;
  } = {},
): Promise<FusionBatch<P>> {
  const limit = pLimit(Math.max(1, options.concurrency ?? 2));
  const unmatched: FusionBatch<P>["unmatched"] = [];
  const matched: Array<{ problem: P; answer: FusionAnswer }> = [];
  for (const answer of answers) {
    const problem = problems.get(answer.qid);
    if (problem === undefined) unmatched.push({ qid: answer.qid, id: answer.id });
    else matched.push({ problem, answer });
  }
  options.onStart?.(matched.length);
  const jobs = matched.map(({ problem, answer }) =>
    limit(async () => {
      const result = await evaluate(problem, answer);
      options.onResult?.(result);
      return result;
    }),
  );
  return { results: await Promise.all(jobs), unmatched, problems };
}
