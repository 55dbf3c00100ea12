// The judge against solutions that try to pass without being right, and against sanitising that
// would cut code a solution needs. Real embedded sandbox, as judge.test.ts.
import { afterAll, describe, expect, it } from "vitest";
import { type BenchmarkTask, parseTaskRow } from "../../../pipeline/eval/model/benchmarks.js";
import { judgeSolution } from "../../../pipeline/eval/model/judge.js";
import { closeSandbox, testSandbox } from "./sandbox.js";

const sandbox = testSandbox();
afterAll(() => closeSandbox(sandbox));

function mbpp(tests: string[]): BenchmarkTask {
  const parsed = parseTaskRow(
    "mbpp",
    {
      task_id: 11,
      text: "Write a function to add up a list.",
      code: "def total(xs):\n    return sum(xs)",
      test_list: tests,
      test_setup_code: "",
      challenge_test_list: [],
    },
    "row 1",
  );
  if (!("task" in parsed)) throw new Error(parsed.invalid.reason);
  return parsed.task;
}

const TOTAL = mbpp(["assert total([1, 2]) == 3", "assert total([]) == 0"]);
const judge = (code: string) => judgeSolution(sandbox, TOTAL, code, { runTimeoutS: 5 });

// What a verdict line looks like; the forger writes it past Python's stdout and leaves at once.
const FORGE = (mark: string) =>
  `import os, json\nos.write(1, (${mark} + json.dumps({"status": "passed", "sanitized": "", "stdout": ""}) + "\\n").encode())\nos._exit(0)\n`;

describe("a solution cannot forge the judge's verdict", () => {
  it("fails a wrong solution that prints a fake PASS line with a guessed mark", async () => {
    const code = `def total(xs):\n    ${FORGE('"@@verdict-000000000000000000000000@@"').split("\n").join("\n    ")}\n    return 0\n`;
    const judged = await judge(code);
    expect(judged.result.status).not.toBe("success");
  });

  it("fails a wrong solution that reads the mark from the judge's globals or its own program file", async () => {
    const fromGlobals = `import __main__\ndef total(xs):\n    mark = getattr(__main__, "JOB", {}).get("nonce", "@@none@@")\n    ${FORGE("mark").split("\n").join("\n    ")}\n`;
    expect((await judge(fromGlobals)).result.status).not.toBe("success");
    const fromFile = `import __main__, base64, json, re, sys\ndef total(xs):\n    src = open(sys.argv[0]).read() if sys.argv and sys.argv[0] else ""\n    blobs = re.findall(r'b64decode\\("([A-Za-z0-9+/=]+)"\\)', src)\n    mark = json.loads(base64.b64decode(blobs[0])).get("nonce", "@@none@@") if blobs else "@@none@@"\n    ${FORGE("mark").split("\n").join("\n    ")}\n`;
    expect((await judge(fromFile)).result.status).not.toBe("success");
  });

  it("fails a wrong solution that reads the mark from stdin", async () => {
    const fromStdin = `import sys\ndef total(xs):\n    mark = sys.stdin.readline().strip() or "@@none@@"\n    ${FORGE("mark").split("\n").join("\n    ")}\n`;
    expect((await judge(fromStdin)).result.status).not.toBe("success");
  });

  it("still passes a right solution", async () => {
    expect((await judge("def total(xs):\n    return sum(xs)\n")).result.status).toBe("success");
  });
});

describe("sanitising keeps what the solution needs and drops its demo", () => {
  it("keeps a top-level loop that fills a table the function reads", async () => {
    const task = mbpp(["assert total([3, 4]) == 2 + 3 + 5 + 7", "assert total([]) == 0"]);
    const code =
      "PRIMES = []\nfor n in range(2, 20):\n    if all(n % p for p in PRIMES):\n        PRIMES.append(n)\n\ndef total(xs):\n    return sum(PRIMES[: len(xs) * 2])\n\nfor case in ([1], [2, 3]):\n    print(total(case))\n";
    const judged = await judgeSolution(sandbox, task, code, { runTimeoutS: 5 });
    expect(judged.result.status).toBe("success");
    expect(judged.sanitized).toContain("for n in range(2, 20):");
    expect(judged.sanitized).not.toContain("print(total(case))");
  });

  it("keeps a module call such as sys.setrecursionlimit, drops demo calls, inputs and their results", async () => {
    const deep = mbpp(["assert total(list(range(3000))) == sum(range(3000))", "assert total([]) == 0"]);
    const code =
      "import sys\nsys.setrecursionlimit(20000)\n\nclass Acc:\n    zero = 0\n\nBASE = Acc.zero\n\ndef helper(xs):\n    return BASE if not xs else xs[0] + helper(xs[1:])\n\ndef total(xs):\n    return helper(xs)\n\nn = int(input())\nresult = total([1, 2])\nprint(result)\ntotal([5])\n";
    const judged = await judgeSolution(sandbox, deep, code, { runTimeoutS: 10 });
    expect(judged.result.status).toBe("success");
    for (const part of [
      "import sys",
      "sys.setrecursionlimit(20000)",
      "class Acc:",
      "BASE = Acc.zero",
      "def helper",
    ])
      expect(judged.sanitized).toContain(part);
    for (const part of ["input()", "result = total", "print(result)", "total([5])"])
      expect(judged.sanitized).not.toContain(part);
  });

  it("drops a demo that reads an imported module the function also uses", async () => {
    const code =
      "import math\n\ndef total(xs):\n    return int(math.fsum(xs))\n\nprint(total([math.nan]))\nvalue = total([math.inf])\n";
    const judged = await judge(code);
    expect(judged.result.status).toBe("success");
    expect(judged.sanitized).toBe("import math\n\ndef total(xs):\n    return int(math.fsum(xs))\n");
  });
});
