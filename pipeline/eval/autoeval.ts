// SandboxFusion's AutoEval dataset type: the model's code, with the problem's test code appended
// (or put at an `#<INSERT>` marker), runs in the execution language with the problem's assets beside
// it; it is accepted when the run succeeds. A failed assertion and any other exception look the
// same from outside (a non-zero exit), so both count as Failed Tests.
import { extractMainCode } from "../code/extract.js";
import { languageFromSandboxId, sandboxLanguageId } from "../code/languages.js";
import { removeMain } from "../code/strip-main.js";
import { callSandbox } from "../sandbox/call.js";
import type { CodeRunner, RunCodeRequest } from "../sandbox/types.js";
import type { AutoEvalProblem, FusionAnswer } from "./fusion-data.js";
import { goImportBlock, splitGoImports } from "./harness/go.js";
import { type RunLimits, rawResult } from "./raw-result.js";
import type { PredictionResult } from "./types.js";

export const INSERT_MARKER = "#<INSERT>";

/** The SandboxFusion language id a problem's program runs under ("python", "nodejs", "pytest", ...). */
export function executionLanguageId(problem: AutoEvalProblem): string {
  const language = languageFromSandboxId(problem.executionLanguage);
  return (language && sandboxLanguageId(language)) ?? problem.executionLanguage;
}

/** Go allows one package clause and imports only at the top, so both halves' are merged there. */
function mergeGoProgram(program: string): string {
  const packageName = /^\s*package\s+(\w+)/m.exec(program)?.[1] ?? "main";
  const { imports, rest } = splitGoImports(program);
  const block = goImportBlock(imports);
  return `package ${packageName}\n\n${block ? `${block}\n\n` : ""}${rest.trim()}\n`;
}

// Languages where an answer's demo block (`if __name__ == "__main__":`) would run before the tests.
const SCRIPT_GUARDS: ReadonlySet<string> = new Set(["python", "ruby", "javascript", "typescript"]);

/**
 * The answer without its own entry point when the test code brings one (two mains do not
 * compile) or when the language would run its demo block before the tests; else as it is.
 */
function answerWithoutMain(problem: AutoEvalProblem, code: string): { code: string; removed: boolean } {
  const language = problem.programmingLanguage;
  const testLanguage = languageFromSandboxId(problem.executionLanguage) ?? language;
  const testBringsMain = removeMain(problem.testCode.replace(INSERT_MARKER, ""), testLanguage).removed;
  return testBringsMain || SCRIPT_GUARDS.has(language)
    ? removeMain(code, language)
    : { code, removed: false };
}

/** The program AutoEval runs: test code around (at `#<INSERT>`) or after the model's code. */
export function buildAutoEvalProgram(
  problem: AutoEvalProblem,
  code: string,
): { program: string; mainRemoved: boolean } {
  const answer = answerWithoutMain(problem, code);
  const marker = problem.testCode.indexOf(INSERT_MARKER);
  let program =
    marker >= 0
      ? problem.testCode.slice(0, marker) +
        answer.code +
        problem.testCode.slice(marker + INSERT_MARKER.length)
      : `${answer.code}\n${problem.testCode}`;
  if (languageFromSandboxId(problem.executionLanguage) === "go") program = mergeGoProgram(program);
  return { program, mainRemoved: answer.removed };
}

/** The code of an answer: `code` as given, or the main code block of `completion` in the problem's language. */
export function answerCode(answer: FusionAnswer, language: AutoEvalProblem["programmingLanguage"]): string {
  if (answer.code !== undefined) return answer.code;
  return extractMainCode(answer.completion ?? "", { language })?.code ?? "";
}

export async function runAutoEval(
  runner: CodeRunner,
  problem: AutoEvalProblem,
  answer: FusionAnswer,
  options: RunLimits = {},
): Promise<PredictionResult> {
  const code = answerCode(answer, problem.programmingLanguage);
  const { program, mainRemoved } = buildAutoEvalProgram(problem, code);
  const request: RunCodeRequest = { code: program, language: executionLanguageId(problem) };
  if (Object.keys(problem.assets).length > 0) request.files = { ...problem.assets };
  const call = await callSandbox(runner, request, options);
  const result = rawResult(call, { ...answer, language: problem.programmingLanguage }, options);
  result.main_removed = mainRemoved;
  const { response } = call;
  const run = response.run_result;
  const compile = response.compile_result;
  const test_results: Record<string, string> = {};
  if (response.status === "Success") {
    result.outcome = "Passed";
    test_results["0"] = "PASSED";
  } else if (response.status === "SandboxError") {
    result.outcome = "Had Error";
    result.reason = `sandbox error: ${response.message}`;
  } else if (compile?.status === "TimeLimitExceeded" || run?.status === "TimeLimitExceeded") {
    result.outcome = "Timed Out";
    result.reason = `${run?.status === "TimeLimitExceeded" ? "run" : "compile"} step ran out of time`;
  } else if (compile && (compile.status !== "Finished" || compile.return_code !== 0)) {
    result.outcome = "Had Error";
    result.reason = "compile error";
  } else {
    result.outcome = "Failed Tests";
    result.reason = `tests exited with code ${run?.return_code ?? "none"}`;
    test_results["0"] = "FAILED";
  }
  result.test_results = test_results["0"] ? test_results : { "0": "MISSING" };
  result.num_tests = 1;
  result.num_passed = result.outcome === "Passed" ? 1 : 0;
  return result;
}
