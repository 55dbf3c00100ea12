import { describe, expect, it } from "vitest";
import { judgePrediction, parseTestResults } from "../../pipeline/eval/outcome.js";
import type { CommandRunResult, RunCodeResponse } from "../../pipeline/sandbox/types.js";

function step(overrides: Partial<CommandRunResult> = {}): CommandRunResult {
  return { status: "Finished", execution_time: 0.1, return_code: 0, stdout: "", stderr: "", ...overrides };
}

function response(run: CommandRunResult | null, compile: CommandRunResult | null = null): RunCodeResponse {
  const failed = [compile, run].some((s) => s && (s.status !== "Finished" || s.return_code !== 0));
  return {
    status: failed ? "Failed" : "Success",
    message: "",
    compile_result: compile,
    run_result: run,
    files: {},
  };
}

const ids = ["0", "1", "2"];

describe("parseTestResults", () => {
  it("reads TEST lines, ignores unknown ids and marks unreported ones MISSING", () => {
    const stdout =
      "noise\nTEST-0...PASSED\nTEST-9...PASSED\ndebug outputTEST-1...FAILED\r\nTEST-1...PASSED\n";
    expect(parseTestResults(stdout, ids)).toEqual({ "0": "PASSED", "1": "FAILED", "2": "MISSING" });
  });
});

describe("judgePrediction", () => {
  const all = (result: string) => ids.map((id) => `TEST-${id}...${result}`).join("\n");

  it("passes when every test passes and the program exits 0, whatever is on stderr", () => {
    expect(
      judgePrediction(response(step({ stdout: all("PASSED"), stderr: "DeprecationWarning" })), ids),
    ).toEqual({
      outcome: "Passed",
      test_results: { "0": "PASSED", "1": "PASSED", "2": "PASSED" },
      num_passed: 3,
    });
  });

  it("reports failed tests", () => {
    const stdout = "TEST-0...PASSED\nTEST-1...FAILED\nTEST-2...PASSED";
    expect(judgePrediction(response(step({ stdout })), ids)).toMatchObject({
      outcome: "Failed Tests",
      reason: "1 of 3 tests failed",
      num_passed: 2,
    });
  });

  it("puts a runtime error before failed tests", () => {
    const stdout = "TEST-0...FAILED\nTEST-1...ZeroDivisionError\nTEST-2...PASSED";
    expect(judgePrediction(response(step({ stdout })), ids)).toMatchObject({
      outcome: "Had Runtime Error",
      reason: "1 tests raised ZeroDivisionError",
      test_results: { "0": "FAILED", "1": "ZeroDivisionError", "2": "PASSED" },
    });
  });

  it("calls a test that never reported a missing test: Had Error", () => {
    const stdout = "TEST-0...PASSED\nTEST-1...ValueError";
    expect(
      judgePrediction(response(step({ stdout, return_code: -11, signal: "SIGSEGV" })), ids),
    ).toMatchObject({
      outcome: "Had Error",
      reason: "1 of 3 tests never reported (signal SIGSEGV)",
      test_results: { "0": "PASSED", "1": "ValueError", "2": "MISSING" },
    });
    const flooded = step({ stdout: "TEST-0...PASSED\nxxxx", stdout_truncated: true });
    expect(judgePrediction(response(flooded), ids).reason).toBe(
      "2 of 3 tests never reported (exit code 0, stdout cut at the sandbox's max_output_bytes)",
    );
  });

  it("times out on either step, before anything else", () => {
    const run = step({ status: "TimeLimitExceeded", stdout: "TEST-0...PASSED", return_code: null });
    expect(judgePrediction(response(run), ids)).toMatchObject({ outcome: "Timed Out", num_passed: 1 });
    const compile = step({ status: "TimeLimitExceeded", return_code: null });
    expect(judgePrediction(response(null, compile), ids)).toMatchObject({
      outcome: "Timed Out",
      reason: "compile step ran out of time",
    });
  });

  it("reports a compile error as Had Error with every test missing", () => {
    const compile = step({ return_code: 1, stderr: "error: expected ';'" });
    expect(judgePrediction(response(null, compile), ids)).toEqual({
      outcome: "Had Error",
      reason: "compile error (exit code 1)",
      test_results: { "0": "MISSING", "1": "MISSING", "2": "MISSING" },
      num_passed: 0,
    });
  });

  it("reports a non-zero exit after all tests passed as Had Error", () => {
    expect(judgePrediction(response(step({ stdout: all("PASSED"), return_code: 3 })), ids)).toMatchObject({
      outcome: "Had Error",
      reason: "exit code 3 after every test passed",
    });
  });

  it("reports a sandbox error as Had Error with its message", () => {
    const sandboxError: RunCodeResponse = {
      status: "SandboxError",
      message: "unknown language",
      compile_result: null,
      run_result: null,
      files: {},
    };
    expect(judgePrediction(sandboxError, ids)).toMatchObject({
      outcome: "Had Error",
      reason: "sandbox error: unknown language",
    });
  });
});
