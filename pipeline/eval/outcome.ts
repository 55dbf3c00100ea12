// Step 4 of BabelCode: read the `TEST-{idx}...{RESULT}` lines a program printed and decide the
// prediction's outcome (the rules, in order, on judgePrediction). Unlike BabelCode, output on stderr
// alone (compiler warnings, deprecation notices) is not an error.
import type { CommandRunResult, RunCodeResponse } from "../sandbox/types.js";
import type { Outcome, TestResult } from "./types.js";

export const PASSED = "PASSED";
export const FAILED = "FAILED";
export const MISSING = "MISSING";

// Anchored at the end only: a prediction's own print without a newline may precede the marker.
const TEST_LINE = /TEST-([A-Za-z0-9_-]+)\.\.\.(.+?)\s*$/;

/** Result per expected test id; ids never printed are MISSING, ids not expected are ignored. */
export function parseTestResults(stdout: string, expectedIds: readonly string[]): Record<string, TestResult> {
  const expected = new Set(expectedIds);
  const seen = new Map<string, TestResult>();
  for (const line of stdout.split("\n")) {
    const match = TEST_LINE.exec(line);
    // The first report of an id counts: a later one could only come from the prediction's own output.
    if (match && expected.has(match[1]!) && !seen.has(match[1]!)) seen.set(match[1]!, match[2]!);
  }
  const results: Record<string, TestResult> = {};
  for (const id of expectedIds) results[id] = seen.get(id) ?? MISSING;
  return results;
}

export interface Judgement {
  outcome: Outcome;
  reason?: string;
  test_results: Record<string, TestResult>;
  num_passed: number;
}

function timedOut(result: CommandRunResult | null): boolean {
  return result?.status === "TimeLimitExceeded";
}

function exitText(result: CommandRunResult): string {
  return result.signal ? `signal ${result.signal}` : `exit code ${result.return_code}`;
}

/**
 * The outcome of one prediction from the sandbox's answer and the test ids its program should print.
 * The order of the rules is the contract:
 *   1. the sandbox could not run it            -> Had Error
 *   2. compile or run ran out of time          -> Timed Out
 *   3. the compile step failed                 -> Had Error
 *   4. a test id never printed (MISSING)       -> Had Error (the program died or exited early)
 *   5. a test printed an exception name        -> Had Runtime Error
 *   6. a test printed FAILED                   -> Failed Tests
 *   7. non-zero exit after reporting every test -> Had Error
 *   8. otherwise                               -> Passed
 */
export function judgePrediction(response: RunCodeResponse, expectedIds: readonly string[]): Judgement {
  const compile = response.compile_result;
  const run = response.run_result;
  const test_results = parseTestResults(run?.stdout ?? "", expectedIds);
  const num_passed = Object.values(test_results).filter((r) => r === PASSED).length;
  const judged = (outcome: Outcome, reason?: string): Judgement =>
    reason === undefined
      ? { outcome, test_results, num_passed }
      : { outcome, reason, test_results, num_passed };

  if (response.status === "SandboxError") return judged("Had Error", `sandbox error: ${response.message}`);
  if (timedOut(compile)) return judged("Timed Out", "compile step ran out of time");
  if (compile && (compile.status !== "Finished" || compile.return_code !== 0)) {
    return judged("Had Error", `compile error (${exitText(compile)})`);
  }
  if (timedOut(run)) return judged("Timed Out", "run step ran out of time");
  if (!run) return judged("Had Error", "the program never ran");
  const results = Object.values(test_results);
  const missing = results.filter((r) => r === MISSING).length;
  if (missing > 0) {
    // Reports lost to the sandbox's output cap are not the program's silence; say which it was.
    const cut = run.stdout_truncated ? ", stdout cut at the sandbox's max_output_bytes" : "";
    return judged(
      "Had Error",
      `${missing} of ${results.length} tests never reported (${exitText(run)}${cut})`,
    );
  }
  const errors = results.filter((r) => r !== PASSED && r !== FAILED);
  if (errors.length > 0) return judged("Had Runtime Error", `${errors.length} tests raised ${errors[0]}`);
  const failed = results.filter((r) => r === FAILED).length;
  if (failed > 0) return judged("Failed Tests", `${failed} of ${results.length} tests failed`);
  if (run.status !== "Finished" || run.return_code !== 0) {
    return judged("Had Error", `${exitText(run)} after every test passed`);
  }
  return judged("Passed");
}
