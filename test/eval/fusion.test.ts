// AutoEval and CommonOJ: row parsing, program assembly and case judging without a sandbox.
import { describe, expect, it } from "vitest";
import { buildAutoEvalProgram, executionLanguageId } from "../../pipeline/eval/autoeval.js";
import { judgeCase, runCommonOJ, withCommonOJTimeouts } from "../../pipeline/eval/common-oj.js";
import {
  type AutoEvalProblem,
  parseAutoEvalProblem,
  parseCommonOJProblem,
  parseFusionAnswers,
} from "../../pipeline/eval/fusion-data.js";
import { EvalInputError } from "../../pipeline/eval/types.js";
import type {
  CodeRunner,
  CommandRunResult,
  RunCodeRequest,
  RunCodeResponse,
} from "../../pipeline/sandbox/types.js";

const finished = (stdout: string, return_code = 0): CommandRunResult => ({
  status: "Finished",
  execution_time: 0.01,
  return_code,
  stdout,
  stderr: "",
});
const response = (
  run: CommandRunResult | null,
  compile: CommandRunResult | null = null,
): RunCodeResponse => ({
  status: [run, compile].some((s) => s && (s.status !== "Finished" || s.return_code !== 0))
    ? "Failed"
    : "Success",
  message: "",
  compile_result: compile,
  run_result: run,
  files: {},
});

describe("SandboxFusion rows", () => {
  it("reads AutoEval rows whose test and labels are JSON text", () => {
    const row = {
      id: 3,
      content: "write add",
      test: JSON.stringify({ code: "assert add(1, 2) == 3", asset: { "a.txt": "eA==" } }),
      labels: JSON.stringify({ programming_language: "python", execution_language: "python" }),
    };
    expect(parseAutoEvalProblem(row, "d:1")).toEqual({
      id: "3",
      content: "write add",
      testCode: "assert add(1, 2) == 3",
      assets: { "a.txt": "eA==" },
      programmingLanguage: "python",
      executionLanguage: "python",
    });
  });

  it("reads CommonOJ rows and names what is missing", () => {
    const row = {
      id: "p",
      content: "",
      test: [{ input: { stdin: "1" }, output: { stdout: "2" } }],
      labels: {},
    };
    expect(parseCommonOJProblem(row, "d:1")).toEqual({
      id: "p",
      content: "",
      cases: [{ stdin: "1", stdout: "2" }],
    });
    expect(() => parseCommonOJProblem({ ...row, test: [] }, "d:2")).toThrow(
      'd:2: "test" must be a non-empty list of {input: {stdin}, output: {stdout}}',
    );
    expect(() => parseAutoEvalProblem({ id: 1, test: { code: "x" }, labels: {} }, "d:3")).toThrow(
      "d:3: labels.programming_language undefined is not a language we know",
    );
  });

  it("numbers answers per problem and refuses repeated sample ids", () => {
    const lines = [
      { value: { id: "a", completion: "x" }, line: 1 },
      { value: { id: "a", code: "y", language: "C++" }, line: 2 },
      { value: { id: "b", code: "z", sample_id: 7 }, line: 3 },
    ];
    expect(parseFusionAnswers(lines, "p")).toEqual([
      { qid: "a", id: "0", completion: "x" },
      { qid: "a", id: "1", code: "y", language: "cpp" },
      { qid: "b", id: "7", code: "z" },
    ]);
    const repeated = [...lines, { value: { id: "b", code: "w", sample_id: "7" }, line: 4 }];
    expect(() => parseFusionAnswers(repeated, "p")).toThrow(EvalInputError);
    expect(() => parseFusionAnswers([{ value: { id: "a" }, line: 1 }], "p")).toThrow('needs "completion"');
  });
});

describe("AutoEval programs", () => {
  const problem = (testCode: string, executionLanguage = "python"): AutoEvalProblem => ({
    id: "1",
    content: "",
    testCode,
    assets: {},
    programmingLanguage: executionLanguage === "go" ? "go" : "python",
    executionLanguage,
  });

  it("appends the test code after the answer, without the answer's main block", () => {
    const code = 'def add(a, b):\n    return a + b\n\nif __name__ == "__main__":\n    print(add(1, 2))\n';
    expect(buildAutoEvalProgram(problem("assert add(1, 2) == 3"), code)).toEqual({
      program: "def add(a, b):\n    return a + b\n\nassert add(1, 2) == 3",
      mainRemoved: true,
    });
  });

  it("puts the answer at #<INSERT> when the test code has one, without its demo block there too", () => {
    const code = "def check(): pass\nif __name__ == '__main__':\n    check()\n";
    expect(buildAutoEvalProgram(problem("import os\n#<INSERT>\ncheck()"), code)).toEqual({
      program: "import os\ndef check(): pass\ncheck()",
      mainRemoved: true,
    });
  });

  it("keeps a compiled answer's main unless the test code brings its own", () => {
    const cpp = (testCode: string): AutoEvalProblem => ({
      ...problem(testCode),
      programmingLanguage: "cpp",
      executionLanguage: "cpp",
    });
    const code = "int twice(int x) { return 2 * x; }\nint main() { return twice(0); }\n";
    expect(
      buildAutoEvalProgram(cpp("#include <cassert>\nstatic int checked = (assert(twice(2) == 4), 0);"), code),
    ).toEqual({
      program: `${code}\n#include <cassert>\nstatic int checked = (assert(twice(2) == 4), 0);`,
      mainRemoved: false,
    });
    expect(buildAutoEvalProgram(cpp("int main() { return twice(2) == 4 ? 0 : 1; }"), code)).toEqual({
      program: "int twice(int x) { return 2 * x; }\n\nint main() { return twice(2) == 4 ? 0 : 1; }",
      mainRemoved: true,
    });
  });

  it("merges Go package clauses and imports of both halves", () => {
    const { program } = buildAutoEvalProgram(
      problem('package main\nimport "fmt"\nfunc main() { fmt.Println(Double(2)) }', "go"),
      'package main\n\nimport (\n\t"fmt"\n\t"strings"\n)\n\nfunc Double(x int) int { _ = strings.ToUpper(""); return 2 * x }',
    );
    expect(program).toBe(
      'package main\n\nimport (\n\t"fmt"\n\t"strings"\n)\n\nfunc Double(x int) int { _ = strings.ToUpper(""); return 2 * x }\nfunc main() { fmt.Println(Double(2)) }\n',
    );
  });

  it("runs under the SandboxFusion id of the execution language", () => {
    expect(executionLanguageId(problem("", "javascript"))).toBe("nodejs");
    expect(executionLanguageId(problem("", "pytest"))).toBe("pytest");
  });
});

describe("CommonOJ judging", () => {
  it("maps each way a case can end to a result and an outcome", () => {
    expect(judgeCase(response(finished("3\n")), "3")).toEqual({ result: "PASSED" });
    expect(judgeCase(response(finished("4\n")), "3")).toEqual({
      result: "FAILED",
      outcome: "Failed Tests",
      reason: "wrong answer",
    });
    expect(judgeCase(response(finished("", 1)), "3")).toMatchObject({
      result: "RUNTIME_ERROR",
      outcome: "Had Runtime Error",
    });
    expect(judgeCase(response(null, finished("", 1)), "3")).toMatchObject({
      result: "COMPILE_ERROR",
      outcome: "Had Error",
    });
    const slow = { ...finished(""), status: "TimeLimitExceeded" as const, return_code: null };
    expect(judgeCase(response(slow), "3")).toMatchObject({ result: "TIMEOUT", outcome: "Timed Out" });
  });

  it("stops at the first failing case unless asked to run them all", async () => {
    const requests: RunCodeRequest[] = [];
    const runner: CodeRunner = {
      async run(request) {
        requests.push(request);
        return response(finished(request.stdin === "2" ? "wrong" : (request.stdin ?? "")));
      },
      async close() {},
    };
    const problem = {
      id: "echo",
      content: "",
      cases: ["1", "2", "3"].map((s) => ({ stdin: s, stdout: s })),
      language: "python" as const,
    };
    const answer = { qid: "echo", id: "0", completion: "```python\nprint(input())\n```" };
    const first = await runCommonOJ(runner, problem, answer);
    expect(first).toMatchObject({
      outcome: "Failed Tests",
      test_results: { "0": "PASSED", "1": "FAILED", "2": "SKIPPED" },
      num_passed: 1,
      num_tests: 3,
      code: "print(input())",
    });
    // SandboxFusion's CommonOJ timeouts for an interpreted language: 20 s run.
    expect(requests.map((r) => [r.language, r.stdin, r.run_timeout])).toEqual([
      ["python", "1", 20],
      ["python", "2", 20],
    ]);
    const all = await runCommonOJ(runner, problem, answer, { runAllCases: true, runTimeoutS: 3 });
    expect(all.test_results).toEqual({ "0": "PASSED", "1": "FAILED", "2": "PASSED" });
    expect(requests.slice(2).map((r) => r.run_timeout)).toEqual([3, 3, 3]);
    expect(withCommonOJTimeouts({}, "cpp")).toEqual({ compileTimeoutS: 10, runTimeoutS: 10 });
  });
});
