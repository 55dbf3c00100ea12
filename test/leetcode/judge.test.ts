// The solution judge against the real embedded sandbox: TACO's function-call tests as TACO stores
// them (arguments as a list per call; expected values bare or wrapped in a one-element list), a
// `class Solution` or a module-level function, stdin/stdout cases, and the verdicts a wrong, a
// crashing and a never-ending solution get.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type CodeRunner, EmbeddedSandbox } from "../../pipeline/sandbox/index.js";
import { type JudgeTask, SolutionJudge } from "../../stages/leetcode/judge.js";
import { parseTests } from "../../stages/leetcode/taco.js";
import { testConfig } from "../sandbox/helpers.js";

const sandbox = new EmbeddedSandbox(testConfig());
const dir = mkdtempSync(path.join(tmpdir(), "leetcode-judge-"));
const judge = new SolutionJudge(
  sandbox,
  path.join(dir, "verdicts"),
  { runTimeoutS: 2, compileTimeoutS: 30 },
  new AbortController().signal,
);
afterAll(async () => {
  await sandbox.close();
  rmSync(dir, { recursive: true, force: true });
});

function task(inputOutput: object): JudgeTask {
  const tests = parseTests(JSON.stringify(inputOutput));
  if ("error" in tests) throw new Error(tests.error);
  return { problemId: "p", tests, starterCode: "" };
}

const RUNNING = `class Solution:
    def runningSum(self, nums: List[int]) -> List[int]:
        return list(accumulate(nums))
`;

describe("the leetcode judge", () => {
  it("calls Solution().fn with each argument list; outputs may be wrapped in a one-element list or bare", async () => {
    const wrapped = task({
      inputs: [[[1, 2, 3]], [[5]]],
      outputs: [[[1, 3, 6]], [[5]]],
      fn_name: "runningSum",
    });
    const bare = task({ inputs: [[[1, 2, 3]], [[5]]], outputs: [[1, 3, 6], [5]], fn_name: "runningSum" });
    expect(await judge.judge(wrapped, RUNNING, "python")).toMatchObject({
      verdict: "passed",
      tests: 2,
      passed: 2,
    });
    expect(await judge.judge(bare, RUNNING, "python")).toMatchObject({ verdict: "passed", passed: 2 });
    // a wrong last element is caught in both shapes
    const wrong = task({ inputs: [[[1, 2, 3]]], outputs: [[[1, 3, 7]]], fn_name: "runningSum" });
    expect(await judge.judge(wrong, RUNNING, "python")).toMatchObject({ verdict: "wrong-answer", passed: 0 });
  });

  it("spreads several arguments, reads tuples as lists, and calls a module-level function without a class", async () => {
    const t = task({
      inputs: [
        [3, 4],
        [0, 1],
      ],
      outputs: [[[4, 3]], [1, 0]],
      fn_name: "swap",
    });
    expect(await judge.judge(t, "def swap(a, b):\n    return (b, a)\n", "python")).toMatchObject({
      verdict: "passed",
      passed: 2,
    });
    expect(await judge.judge(t, "def swap(a, b):\n    return (a, b)\n", "python")).toMatchObject({
      verdict: "wrong-answer",
    });
  });

  it("judges a crash as a runtime error and a loop that never ends as a time-out", async () => {
    const t = task({ inputs: [[1]], outputs: [[2]], fn_name: "inc" });
    const crash = "class Solution:\n    def inc(self, n):\n        return n + undefined_name\n";
    const hang = "class Solution:\n    def inc(self, n):\n        while True:\n            pass\n";
    const crashed = await judge.judge(t, crash, "python");
    expect(crashed.verdict).toBe("runtime-error");
    expect(crashed.detail).toMatch(/NameError/);
    expect((await judge.judge(t, hang, "python")).verdict).toBe("timeout");
  });

  it("compares stdin/stdout cases by SandboxFusion's rule (trailing whitespace aside), one run per case", async () => {
    const t = task({ inputs: ["2 3\n", "10 -4\n"], outputs: ["5\n", "6"] });
    const add = "a, b = map(int, input().split())\nprint(a + b)\n";
    expect(await judge.judge(t, add, "python")).toMatchObject({ verdict: "passed", tests: 2, passed: 2 });
    const sub = "a, b = map(int, input().split())\nprint(a - b)\n";
    expect(await judge.judge(t, sub, "python")).toMatchObject({ verdict: "wrong-answer", passed: 0 });
  });

  it("takes the tests' text as data: a string that looks like the harness's placeholders stays a string", async () => {
    const t = task({
      inputs: [["PLACEHOLDER_CALLEE"], ['"PLACEHOLDER_TESTS\\n']],
      outputs: [18, 20],
      fn_name: "size",
    });
    expect(await judge.judge(t, "def size(s):\n    return len(s)\n", "python")).toMatchObject({
      verdict: "passed",
      passed: 2,
    });
  });

  it("judges one verdict asked for twice at once (two problems with the same tests) once: one run, counted once", async () => {
    let runs = 0;
    const counting: CodeRunner = {
      run: (request, options) => {
        runs++;
        return sandbox.run(request, options);
      },
      close: async () => {},
    };
    const verdicts = path.join(dir, "at-once");
    const once = new SolutionJudge(
      counting,
      verdicts,
      { runTimeoutS: 2, compileTimeoutS: 30 },
      new AbortController().signal,
    );
    const t = task({ inputs: ["2 3\n"], outputs: ["5\n"] });
    const add = "a, b = map(int, input().split())\nprint(a + b)\n";
    const [first, second] = await Promise.all([
      once.judge({ ...t, problemId: "p1" }, add, "python"),
      once.judge({ ...t, problemId: "p2" }, add, "python"),
    ]);
    expect(first).toMatchObject({ verdict: "passed", tests: 1, passed: 1 });
    expect(second).toEqual(first);
    expect(runs).toBe(1);
    expect({ computed: once.computed, reused: once.reused }).toEqual({ computed: 1, reused: 1 });
    const [segment] = readdirSync(verdicts);
    expect(readFileSync(path.join(verdicts, segment!), "utf8").split("\n").filter(Boolean)).toHaveLength(1);
  });
});
