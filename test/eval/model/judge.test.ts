// The judge against the real embedded sandbox: a passing solution, and the paper's three failure
// cases rendered as feedback (the exception, the test's input with expected and actual output, the
// time-out), plus the bad inputs that must end as outcomes: a syntax error, a flood of output, a
// program that leaves before its tests report.
import { afterAll, describe, expect, it } from "vitest";
import type { BenchmarkTask } from "../../../pipeline/eval/model/benchmarks.js";
import { parseTaskRow } from "../../../pipeline/eval/model/benchmarks.js";
import { completeSolution, judgeSolution } from "../../../pipeline/eval/model/judge.js";
import { executionFeedback } from "../../../pipeline/execution/index.js";
import { closeSandbox, testSandbox } from "./sandbox.js";

const sandbox = testSandbox();
afterAll(() => closeSandbox(sandbox));

const PROMPT = `from typing import List


def double(n: int) -> int:
    return 2 * n


def doubled(values: List[int]) -> List[int]:
    """ Each value doubled, using double. """
`;

function task(
  row: Record<string, unknown>,
  benchmark: "humaneval" | "mbpp" | "mbpp+" = "humaneval",
): BenchmarkTask {
  const parsed = parseTaskRow(benchmark, row, "row 1");
  if (!("task" in parsed)) throw new Error(parsed.invalid.reason);
  return parsed.task;
}

const HUMANEVAL = task({
  task_id: "HumanEval/9",
  prompt: PROMPT,
  canonical_solution: "    return [double(v) for v in values]\n",
  test: "def check(candidate):\n    assert candidate([1, 2]) == [2, 4]\n    assert candidate([]) == []\n",
  entry_point: "doubled",
});

const MBPP = task(
  {
    task_id: 7,
    text: "Write a function to reverse the words of a sentence.",
    code: "def reverse_words(s):\n    return ' '.join(reversed(s.split()))",
    test_list: ["assert reverse_words('a b c') == 'c b a'", "assert reverse_words('') == ''"],
    test_setup_code: "",
    challenge_test_list: [],
  },
  "mbpp",
);

const judge = (t: BenchmarkTask, code: string) => judgeSolution(sandbox, t, code, { runTimeoutS: 2 });

describe("judging a solution in the sandbox", () => {
  it("passes the canonical solution, and a bare continuation joined to its prompt (helpers and imports from the prompt)", async () => {
    const full = await judge(HUMANEVAL, HUMANEVAL.canonical);
    expect(full.result.status).toBe("success");
    expect(completeSolution(HUMANEVAL, "    return [double(v) for v in values]\n")).toBe(HUMANEVAL.canonical);
    const body = await judge(HUMANEVAL, "    return [double(v) for v in values]\n");
    expect(body.result.status).toBe("success");
    // an answer that redefines only the entry point still sees the prompt's helper
    const bare = await judge(HUMANEVAL, "def doubled(values):\n    return [double(v) for v in values]\n");
    expect(bare.result.status).toBe("success");
  });

  it("drops the answer's demo code (prints, asserts, the main guard) before judging", async () => {
    const code =
      "def reverse_words(s):\n    return ' '.join(reversed(s.split()))\n\nprint(reverse_words('x y'))\nassert reverse_words('x') == 'wrong'\n\nif __name__ == '__main__':\n    raise SystemExit(3)\n";
    const judged = await judge(MBPP, code);
    expect(judged.result.status).toBe("success");
    expect(judged.sanitized).toBe("def reverse_words(s):\n    return ' '.join(reversed(s.split()))\n");
  });

  it("reports a failed assert as the test's input, the expected and the actual output", async () => {
    const judged = await judge(HUMANEVAL, "def doubled(values):\n    return [v + 2 for v in values]\n");
    expect(judged.result.status).toBe("wrong-output");
    expect(executionFeedback(judged.result)).toBe(
      "Execution result: \nInput: doubled([1, 2])\nExpected output: [2, 4]\nActual output: [3, 4]",
    );
    expect(judged.assertion).toBe("candidate([1, 2]) == [2, 4]");
    const mbpp = await judge(MBPP, "def reverse_words(s):\n    return s.upper()\n");
    expect(executionFeedback(mbpp.result)).toBe(
      "Execution result: \nInput: reverse_words('a b c')\nExpected output: 'c b a'\nActual output: 'A B C'",
    );
  });

  it("takes the actual value from the call, even when an assertion helper converts it, and a recursive solution's outer call", async () => {
    const plus = task(
      {
        task_id: 8,
        code: "def pairs(n):\n    return [(i, i) for i in range(n)]",
        prompt: '"""\nWrite pairs.\n"""\n',
        source_file: "x.py",
        test_imports: ["import math"],
        test_list: ["assert pairs(1) == [(0, 0)]"],
        test: "def assertion(out, exp, atol):\n    if isinstance(out, list) and isinstance(exp, list):\n        out = set(out)\n        exp = set(exp)\n    assert out == exp\n\ninputs = [[1], [3]]\nresults = [[(0, 0)], [(0, 0), (1, 1), (2, 2)]]\nfor inp, exp in zip(inputs, results):\n    assertion(pairs(*inp), exp, 0)\n",
      },
      "mbpp+",
    );
    const recursive =
      "def pairs(n):\n    if n <= 1:\n        return [(0, 0)] if n == 1 else []\n    return pairs(n - 1) + [(n, n)]\n";
    const judged = await judge(plus, recursive);
    // the expected side as the helper compared it (a set, in Python's order); the actual as returned
    const text = executionFeedback(judged.result);
    expect(text).toMatch(
      /^Execution result: \nInput: pairs\(3\)\nExpected output: \{[^}]*\}\nActual output: \[\(0, 0\), \(2, 2\), \(3, 3\)\]$/,
    );
    for (const pair of ["(0, 0)", "(1, 1)", "(2, 2)"]) expect(text.split("\n")[2]).toContain(pair);
  });

  it("reports an exception with its traceback, naming the solution's lines and not the judge's", async () => {
    const judged = await judge(
      HUMANEVAL,
      "def doubled(values):\n    print('working')\n    return [v * factor for v in values]\n",
    );
    expect(judged.result.status).toBe("runtime-error");
    const text = executionFeedback(judged.result);
    expect(text).toMatch(/^Execution result: \nworking\nTraceback \(most recent call last\):\n/);
    expect(text).toContain('File "<solution>", line 3, in doubled');
    expect(text).toContain("NameError: name 'factor' is not defined");
    expect(text).not.toContain("judge");
    const syntax = await judge(MBPP, "def reverse_words(s)\n    return s\n");
    expect(syntax.result.status).toBe("runtime-error");
    expect(executionFeedback(syntax.result)).toContain("SyntaxError");
    const missing = await judge(HUMANEVAL, "def other(values):\n    return values\n");
    // no `doubled` of its own: the prompt's stub answers None, which is a wrong value
    expect(missing.result.status).toBe("wrong-output");
  });

  it("says 'Execution timed out' for code that hangs", async () => {
    const judged = await judge(MBPP, "def reverse_words(s):\n    while True:\n        pass\n");
    expect(judged.result.status).toBe("timeout");
    expect(executionFeedback(judged.result)).toBe("Execution result: \nExecution timed out");
  });

  it("judges code that floods its output, and keeps only the head of what it printed", async () => {
    const flood =
      "def reverse_words(s):\n    for _ in range(200000):\n        print('spam spam spam spam')\n    return s\n";
    const judged = await judge(MBPP, flood);
    expect(judged.result.status).toBe("wrong-output");
    expect(judged.result.stdout.length).toBeLessThan(10_000);
    expect(judged.result.stdout).toContain("more characters of output");
    // straight to the file descriptor, past Python's sys.stdout: the sandbox's cap ends it
    const raw = "import os\ndef reverse_words(s):\n    while True:\n        os.write(1, b'x' * 65536)\n";
    const rawJudged = await judge(MBPP, raw);
    expect(["runtime-error", "timeout"]).toContain(rawJudged.result.status);
  });

  it("does not pass a program that leaves before its tests report", async () => {
    const judged = await judge(MBPP, "import os\ndef reverse_words(s):\n    os._exit(0)\n");
    expect(judged.result.status).toBe("runtime-error");
    expect(executionFeedback(judged.result)).toContain("exited before its tests finished");
  });
});
