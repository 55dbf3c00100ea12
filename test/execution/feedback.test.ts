import { describe, expect, it } from "vitest";
import {
  DEFAULT_FEEDBACK_TEMPLATE,
  executionFeedback,
  headAndTail,
} from "../../pipeline/execution/feedback.js";
import { classifyResponse, withExpectedOutput } from "../../pipeline/execution/result.js";
import type { CommandRunResult, RunCodeResponse } from "../../pipeline/sandbox/types.js";

function cmd(overrides: Partial<CommandRunResult>): CommandRunResult {
  return { status: "Finished", execution_time: 0.1, return_code: 0, stdout: "", stderr: "", ...overrides };
}
function response(
  run: Partial<CommandRunResult> | null,
  compile: Partial<CommandRunResult> | null = null,
): RunCodeResponse {
  return {
    status: run && run.return_code === 0 && run.status !== "TimeLimitExceeded" ? "Success" : "Failed",
    message: "",
    compile_result: compile ? cmd(compile) : null,
    run_result: run ? cmd(run) : null,
    files: {},
  };
}

describe("execution results as feedback", () => {
  it("shows a clean run's output, and says so when it printed nothing", () => {
    const ok = classifyResponse(response({ stdout: "[1, 2, 3]\n" }), "python");
    expect(ok.status).toBe("success");
    expect(executionFeedback(ok)).toBe("Execution result: \n[1, 2, 3]");
    const silent = classifyResponse(response({ stdout: "" }), "python");
    expect(executionFeedback(silent)).toBe(`Execution result: \n${DEFAULT_FEEDBACK_TEMPLATE.no_output}`);
  });

  it("shows an exception's traceback and a compiler's diagnostics", () => {
    const err = classifyResponse(
      response({
        return_code: 1,
        stdout: "before\n",
        stderr: "Traceback (most recent call last):\nNameError: name 'x' is not defined\n",
      }),
      "python",
    );
    expect(err.status).toBe("runtime-error");
    expect(executionFeedback(err)).toBe(
      "Execution result: \nbefore\nTraceback (most recent call last):\nNameError: name 'x' is not defined",
    );
    const compile = classifyResponse(
      response(null, { return_code: 1, stderr: "a.c:1: error: expected ';'" }),
      "c",
    );
    expect(compile.status).toBe("compile-error");
    expect(executionFeedback(compile)).toContain("expected ';'");
  });

  it("says a time-out as the paper does, and marks sandbox failures apart", () => {
    const slow = classifyResponse(response({ status: "TimeLimitExceeded", return_code: null }), "python");
    expect(slow.status).toBe("timeout");
    expect(executionFeedback(slow)).toBe("Execution result: \nExecution timed out");
    const down = classifyResponse(
      { status: "SandboxError", message: "no worker", compile_result: null, run_result: null, files: {} },
      "go",
    );
    expect(down.status).toBe("sandbox-error");
  });

  it("shows input, expected and actual output when a test disagrees", () => {
    const ran = classifyResponse(response({ stdout: "5\n" }), "python");
    const wrong = withExpectedOutput(ran, { input: "2 2", expected: "4" });
    expect(wrong.status).toBe("wrong-output");
    expect(executionFeedback(wrong)).toBe(
      "Execution result: \nInput: 2 2\nExpected output: 4\nActual output: 5",
    );
    expect(withExpectedOutput(ran, { expected: "5  \n\n" }).status).toBe("success");
  });

  it("keeps the head and the tail of long output", () => {
    const text = `${"a".repeat(1000)}${"b".repeat(1000)}END`;
    const cut = headAndTail(text, 100, 0.4);
    expect(cut.startsWith("a".repeat(40))).toBe(true);
    expect(cut.endsWith(`${"b".repeat(57)}END`)).toBe(true);
    expect(cut).toContain("[... 1,903 characters omitted ...]");
    expect(headAndTail("short", 100)).toBe("short");
  });
});
