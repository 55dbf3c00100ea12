// The evaluator's own decisions, with a stand-in runner: which name it calls, what it sends, what
// it records. The real sandbox runs in test/e2e/eval-babelcode.test.ts.
import { describe, expect, it } from "vitest";
import { evaluatePredictions, type TestIndex } from "../../pipeline/eval/evaluate.js";
import { generateTests } from "../../pipeline/eval/generate.js";
import { parsePredictions } from "../../pipeline/eval/predictions.js";
import { callSandbox, commandLines } from "../../pipeline/sandbox/call.js";
import type { CodeRunner, RunCodeRequest, RunCodeResponse } from "../../pipeline/sandbox/types.js";

const question = {
  question_id: "pal",
  entry_fn_name: "isPalindrome",
  schema: { params: [{ name: "s", type: "string" }], return: { type: "boolean" } },
  test_cases: [{ idx: 0, inputs: { s: "aba" }, outputs: true }],
};

function index(languages: string[]): TestIndex {
  const tests = new Map<string, Map<string, ReturnType<typeof generateTests>["tests"][number]>>();
  for (const test of generateTests([{ value: question, line: 1 }], languages).tests) {
    tests.set(test.language, new Map([[test.qid, test]]));
  }
  return tests;
}

/** Answers every request as if each test printed PASSED, and keeps the requests. */
class RecordingRunner implements CodeRunner {
  readonly requests: RunCodeRequest[] = [];
  async run(request: RunCodeRequest): Promise<RunCodeResponse> {
    this.requests.push(request);
    const run = {
      status: "Finished" as const,
      execution_time: 0.01,
      return_code: 0,
      stdout: "TEST-0...PASSED\n",
      stderr: "",
    };
    return { status: "Success", message: "", compile_result: null, run_result: run, files: {} };
  }
  async close() {}
}

const predict = (rows: object[]) => parsePredictions(rows.map((value, i) => ({ value, line: i + 1 })));

describe("evaluatePredictions", () => {
  it("calls BabelCode's styled name, or the spelling the code defines, or the one the prediction names", async () => {
    const runner = new RecordingRunner();
    const run = await evaluatePredictions(
      runner,
      predict([
        { qid: "pal", id: "styled", language: "python", code: "def is_palindrome(s): return s == s[::-1]" },
        {
          qid: "pal",
          id: "question's",
          language: "python",
          code: "def isPalindrome(s): return s == s[::-1]",
        },
        { qid: "pal", id: "named", language: "python", code: "def p(s): return True", entry_point: "p" },
        {
          qid: "pal",
          id: "pascal",
          language: "csharp",
          code: "class Solution { public bool IsPalindrome(string s) => true; }",
        },
      ]),
      index(["python", "csharp"]),
      { memoryMb: 256 },
    );
    const calls = runner.requests.map((r) =>
      /__bc_check\("TEST-0\.\.\.", lambda: (\w+)\(|BcCheck\("TEST-0\.\.\.", \(\) => ([\w.:()\s]+)\(/
        .exec(r.code)
        ?.slice(1)
        .find(Boolean),
    );
    expect(calls).toEqual(["is_palindrome", "isPalindrome", "p", "new global::Solution().IsPalindrome"]);
    expect(runner.requests.map((r) => [r.language, r.memory_limit_MB])).toEqual([
      ["python", 256],
      ["python", 256],
      ["python", 256],
      ["csharp", 256],
    ]);
    expect(run.results.map((r) => r.outcome)).toEqual(["Passed", "Passed", "Passed", "Passed"]);
    expect(run.results[0]?.commands).toEqual([
      {
        step: "run",
        command: ["/usr/bin/python3", "-u", "main.py"],
        status: "Finished",
        return_code: 0,
        execution_time: 0.01,
        peak_memory_kb: null,
      },
    ]);
  });

  it("leaves the commands out when told (a remote server runs its own)", async () => {
    const run = await evaluatePredictions(
      new RecordingRunner(),
      predict([{ qid: "pal", id: "a", language: "python", code: "def is_palindrome(s): return True" }]),
      index(["python"]),
      { recordCommands: false },
    );
    expect(run.results[0]?.commands[0]?.command).toBeNull();
  });
});

describe("sandbox calls", () => {
  it("spell the language table's command lines, naming a memory limit left to the sandbox", () => {
    expect(commandLines({ code: "public class Main {}", language: "java", memory_limit_MB: 512 })).toEqual({
      compile: expect.arrayContaining(["/usr/bin/javac", "Main.java"]),
      run: expect.arrayContaining(["/usr/bin/java", "-Xmx512m", "Main"]),
    });
    expect(commandLines({ code: "", language: "php" })?.run).toEqual([
      "/usr/bin/php",
      "-d",
      "memory_limit=<memory_mb>M",
      "main.php",
    ]);
    expect(commandLines({ code: "", language: "cobol" })).toBeNull();
  });

  it("turn a runner that throws into a SandboxError answer", async () => {
    const broken: CodeRunner = {
      run: async () => {
        throw new Error("connect ECONNREFUSED 127.0.0.1:1");
      },
      close: async () => {},
    };
    const call = await callSandbox(broken, { code: "", language: "python" }, { runTimeoutS: 3 });
    expect(call.request.run_timeout).toBe(3);
    expect(call.response).toEqual({
      status: "SandboxError",
      message: "connect ECONNREFUSED 127.0.0.1:1",
      compile_result: null,
      run_result: null,
      files: {},
    });
  });
});
