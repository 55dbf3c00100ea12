// SandboxFusion's CommonOJ dataset type: a complete program runs once per stdin/stdout case and is
// accepted when every case's output matches (oj-judge.ts). Like SandboxFusion, the cases stop at
// the first one that fails unless `runAllCases` is set (the ones not run are recorded as SKIPPED),
// and its timeouts apply where the caller gives none.
import { extractMainCode } from "../code/extract.js";
import { type LanguageName, sandboxLanguageId } from "../code/languages.js";
import { callUnderPolicy, type SandboxSettings } from "../execution/index.js";
import { callSandbox, type SandboxCall } from "../sandbox/call.js";
import { findLanguage } from "../sandbox/index.js";
import { sandboxErrorResponse } from "../sandbox/request.js";
import type { CodeRunner, RunCodeResponse } from "../sandbox/types.js";
import type { CommonOJProblem, FusionAnswer } from "./fusion-data.js";
import { type OutputJudgeOptions, outputsMatch } from "./oj-judge.js";
import { type RunLimits, rawResult } from "./raw-result.js";
import type { Outcome, PredictionResult } from "./types.js";

export const SKIPPED = "SKIPPED";

export interface CommonOJOptions extends RunLimits, OutputJudgeOptions {
  /** run every case even after one fails (SandboxFusion's `run_all_cases`) */
  runAllCases?: boolean;
  /** language when neither the answer nor the problem names one */
  language?: LanguageName;
  /**
   * A stage's outage policy (pipeline/execution): each case's run is tried again while the sandbox
   * fails, then SandboxOutageError is thrown. Unset: one try, a failure recorded as SandboxFusion does.
   */
  outage?: Pick<SandboxSettings, "sandbox_attempts" | "backoff_ms">;
}

/** What one case's run means: its test result and, when it failed, the outcome it gives the answer. */
export function judgeCase(
  response: RunCodeResponse,
  expectedStdout: string,
  options: OutputJudgeOptions = {},
): { result: string; outcome?: Outcome; reason?: string } {
  const { compile_result: compile, run_result: run } = response;
  if (response.status === "SandboxError") {
    return { result: "SandboxError", outcome: "Had Error", reason: `sandbox error: ${response.message}` };
  }
  if (compile?.status === "TimeLimitExceeded")
    return { result: "TIMEOUT", outcome: "Timed Out", reason: "compile step ran out of time" };
  if (compile && (compile.status !== "Finished" || compile.return_code !== 0)) {
    return { result: "COMPILE_ERROR", outcome: "Had Error", reason: "compile error" };
  }
  if (run?.status === "TimeLimitExceeded")
    return { result: "TIMEOUT", outcome: "Timed Out", reason: "run step ran out of time" };
  if (run?.status !== "Finished" || run.return_code !== 0) {
    const exit = run?.signal ? `signal ${run.signal}` : `exit code ${run?.return_code ?? "none"}`;
    return {
      result: "RUNTIME_ERROR",
      outcome: "Had Runtime Error",
      reason: `the program ended with ${exit}`,
    };
  }
  if (!outputsMatch(run.stdout ?? "", expectedStdout, options)) {
    return { result: "FAILED", outcome: "Failed Tests", reason: "wrong answer" };
  }
  return { result: "PASSED" };
}

export async function runCommonOJ(
  runner: CodeRunner,
  problem: CommonOJProblem,
  answer: FusionAnswer,
  options: CommonOJOptions = {},
): Promise<PredictionResult> {
  const language =
    answer.language ??
    problem.language ??
    options.language ??
    (answer.completion ? extractMainCode(answer.completion)?.lang : undefined);
  const code =
    answer.code ??
    (language ? extractMainCode(answer.completion ?? "", { language })?.code : undefined) ??
    "";
  const sandboxId = language ? sandboxLanguageId(language) : undefined;
  const test_results: Record<string, string> = {};
  if (!language || !sandboxId) {
    const reason = language
      ? `${language} cannot run in the sandbox`
      : "no language: set the answer's language, labels.programming_language or --language";
    const never: SandboxCall = {
      request: { code, language: language ?? "" },
      response: sandboxErrorResponse(reason),
      elapsed_s: 0,
    };
    const result = rawResult(never, { ...answer, language: language ?? "python" }, options);
    result.reason = reason;
    for (let i = 0; i < problem.cases.length; i++) test_results[String(i)] = SKIPPED;
    return finish(result, test_results, problem);
  }
  const limits = withCommonOJTimeouts(options, sandboxId);
  // The record keeps the first failing run (or the last run when all pass): that is what to debug.
  let result: PredictionResult | undefined;
  let failure: { outcome: Outcome; reason?: string } | undefined;
  let elapsed = 0;
  for (const [i, testCase] of problem.cases.entries()) {
    if (failure && !options.runAllCases) {
      test_results[String(i)] = SKIPPED;
      continue;
    }
    const request = { code, language: sandboxId, stdin: testCase.stdin };
    const call = options.outage
      ? await callUnderPolicy(runner, request, limits, options.outage)
      : await callSandbox(runner, request, limits);
    elapsed += call.elapsed_s;
    const judged = judgeCase(call.response, testCase.stdout, options);
    test_results[String(i)] = judged.result;
    if (failure) continue;
    result = rawResult(call, { ...answer, language }, options);
    if (judged.outcome) {
      failure = judged.reason
        ? { outcome: judged.outcome, reason: judged.reason }
        : { outcome: judged.outcome };
    }
  }
  const final = result!;
  final.outcome = failure?.outcome ?? "Passed";
  if (failure?.reason) final.reason = failure.reason;
  final.elapsed_s = Math.round(elapsed * 1000) / 1000;
  return finish(final, test_results, problem);
}

/** SandboxFusion's CommonOJ timeouts where none are given: 10 s compile and 10 s run for compiled languages, 20 s run otherwise. */
export function withCommonOJTimeouts(options: CommonOJOptions, sandboxId: string): CommonOJOptions {
  const compiled = findLanguage(sandboxId)?.compile !== undefined;
  return {
    ...options,
    compileTimeoutS: options.compileTimeoutS ?? 10,
    runTimeoutS: options.runTimeoutS ?? (compiled ? 10 : 20),
  };
}

function finish(
  result: PredictionResult,
  test_results: Record<string, string>,
  problem: CommonOJProblem,
): PredictionResult {
  result.test_results = test_results;
  result.num_tests = problem.cases.length;
  result.num_passed = Object.values(test_results).filter((r) => r === "PASSED").length;
  return result;
}
