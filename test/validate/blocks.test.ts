// validateDialogue against the real embedded sandbox: each outcome (passed, failed, timed out, not
// runnable with its reason) in Python and in compiled languages, the harness around bare definitions,
// and Python blocks of one dialogue running notebook-style across turns.
import { afterAll, describe, expect, it } from "vitest";
import type { LanguageName } from "../../pipeline/code/index.js";
import { executeBlock, runBlock } from "../../pipeline/execution/index.js";
import { EmbeddedSandbox } from "../../pipeline/sandbox/index.js";
import { sandboxErrorResponse } from "../../pipeline/sandbox/request.js";
import type { CodeRunner } from "../../pipeline/sandbox/types.js";
import { OUTPUT_CHARS, type RunProgram, validateDialogue } from "../../stages/validate/validate-dialogue.js";
import { testConfig } from "../sandbox/helpers.js";
import { fence, turns } from "./fixtures.js";

const sandbox = new EmbeddedSandbox(testConfig({ compile_timeout_s: 120 }));
afterAll(() => sandbox.close());

const run: RunProgram = (code: string, lang: LanguageName, previous: readonly string[]) =>
  runBlock(sandbox, code, lang, { previous, runTimeoutS: 2, compileTimeoutS: 120 });

const one = (lang: string, code: string, prose = "Here you go:") =>
  validateDialogue({ messages: turns(["Please write it.", `${prose}\n${fence(lang, code)}`]) }, run);

describe("validate: one block", () => {
  it("Python: a script passes, an exception fails with its error, a busy loop times out", async () => {
    const ok = await one("python", "print(sum(range(5)))");
    expect(ok).toMatchObject({ outcome: "passed", final_message: 1 });
    expect(ok.blocks).toEqual([
      expect.objectContaining({ lang: "python", outcome: "passed", harness: "as-is" }),
    ]);

    const broken = await one("python", "items = [1, 2]\nprint(items[5])");
    expect(broken).toMatchObject({ outcome: "failed", error: "IndexError: list index out of range" });

    const slow = await one("python", "while True:\n    pass");
    expect(slow.outcome).toBe("timeout");
  });

  it("keeps what each run returned: exit status, streams (a long one clipped, its cut counted), peak memory", async () => {
    const v = await one(
      "python",
      "import sys\nprint('x' * 10000, end='')\nprint('to err', file=sys.stderr)\nsys.exit(3)",
    );
    const [block] = v.blocks;
    expect(block).toMatchObject({
      outcome: "failed",
      exit_code: 3,
      stderr: "to err\n",
      stdout_cut: 10000 - OUTPUT_CHARS,
    });
    expect(block!.stdout!.startsWith("x".repeat(OUTPUT_CHARS / 2))).toBe(true);
    expect(block!.stdout).toContain(`${(10000 - OUTPUT_CHARS).toLocaleString("en-US")} characters omitted`);
    expect(block!.stdout!.replace(/\n\[\.\.\. .* omitted \.\.\.\]\n/, "")).toBe("x".repeat(OUTPUT_CHARS));
    expect(block).not.toHaveProperty("stderr_cut");
    const ok = (await one("python", "print('hello')")).blocks[0];
    expect(ok).toMatchObject({ outcome: "passed", exit_code: 0, stdout: "hello\n" });
    expect(ok).not.toHaveProperty("stderr");
    // the sandbox measures a run's peak memory (cgroup memory.peak, else the launcher's own count)
    expect(ok!.peak_memory_kb).toBeGreaterThan(0);
  });

  it("Python: a to-do program with a real bug fails; only an author's TODO marker makes a placeholder", async () => {
    const todo = await one("python", "todo = ['write', 'test']\nprint(todo[2])");
    expect(todo).toMatchObject({ outcome: "failed", error: "IndexError: list index out of range" });
    const placeholder = await one(
      "python",
      "def split_line(line):\n    # TODO: handle quoted commas\n    return fields\nprint(split_line('a,b'))",
    );
    expect(placeholder).toMatchObject({ outcome: "not-runnable", reason: "fragment" });
  });

  it("Python: not runnable for a missing package, interactive input, no display, a network", async () => {
    const pkg = await one("python", "import nonexistentpkg\nprint(nonexistentpkg.version)");
    expect(pkg).toMatchObject({ outcome: "not-runnable", reason: "missing-package" });
    expect(pkg.error).toContain("nonexistentpkg");

    const input = await one("python", "name = input('Your name? ')\nprint('Hello', name)");
    expect(input).toMatchObject({ outcome: "not-runnable", reason: "needs-input" });

    const gui = await one("python", "import tkinter\nroot = tkinter.Tk()\nroot.mainloop()");
    // Debian's python3 may lack tkinter altogether: then the package is what is missing
    expect(["needs-gui", "missing-package"]).toContain(gui.reason);
    expect(gui.outcome).toBe("not-runnable");

    const net = await one(
      "python",
      "import urllib.request\nprint(urllib.request.urlopen('http://example.com', timeout=1).status)",
    );
    expect(net).toMatchObject({ outcome: "not-runnable", reason: "needs-network" });
  });

  it("C++ and Java: bare definitions compile inside a harness; compile errors fail; loops time out", async () => {
    const cpp = await one(
      "cpp",
      "int add(int a, int b) {\n    vector<int> v{a, b};\n    return v[0] + v[1];\n}",
    );
    expect(cpp).toMatchObject({ outcome: "passed" });
    expect(cpp.blocks[0]).toMatchObject({ lang: "cpp", harness: "definitions" });

    const cppBroken = await one("cpp", "int add(int a, int b) {\n    return a + c;\n}");
    expect(cppBroken.outcome).toBe("failed");
    expect(cppBroken.error).toMatch(/.c. was not declared/);

    const java = await one(
      "java",
      "class Solution {\n    public int[] twoSum(int[] nums, int target) {\n        Map<Integer, Integer> seen = new HashMap<>();\n        for (int i = 0; i < nums.length; i++) {\n            Integer j = seen.get(target - nums[i]);\n            if (j != null) return new int[] {j, i};\n            seen.put(nums[i], i);\n        }\n        return new int[0];\n    }\n}",
    );
    expect(java).toMatchObject({ outcome: "passed" });
    expect(java.blocks[0]).toMatchObject({ harness: "definitions" });

    const javaBroken = await one("java", "public int half(int x) {\n    return x / 2\n}");
    expect(javaBroken.outcome).toBe("failed");
    expect(javaBroken.error).toMatch(/';' expected/);

    const cppLoop = await one("cpp", "int main() {\n    volatile long i = 0;\n    while (true) i++;\n}");
    expect(cppLoop).toMatchObject({ outcome: "timeout" });
    expect(cppLoop.blocks[0]).toMatchObject({ harness: "as-is" });
  });

  it("not runnable without a run: no language, output blocks, markup, a language the sandbox lacks, installs", async () => {
    const cases: [string, string, string][] = [
      ["", "frobnicate the widgets\nuntil done", "fragment"],
      ["text", "Result: 42", "not-code"],
      ["json", '{"a": 1}', "not-code"],
      ["haskell", 'main = putStrLn "hi"', "language-unavailable"],
      ["bash", "pip install numpy", "needs-network"],
    ];
    for (const [tag, code, reason] of cases) {
      const v = await one(tag, code);
      expect(v, `${tag}: ${code}`).toMatchObject({ outcome: "not-runnable", reason });
      expect(v.blocks[0]!.harness).toBeUndefined();
    }
  });

  it("SQL: a query without its schema is not runnable; with its schema it runs", async () => {
    const bare = await one("sql", "SELECT name FROM employees WHERE salary > 1000;");
    expect(bare).toMatchObject({ outcome: "not-runnable", reason: "sql-without-schema" });
    const whole = await one(
      "sql",
      "CREATE TABLE employees (name TEXT, salary INT);\nINSERT INTO employees VALUES ('Ana', 2000);\nSELECT name FROM employees WHERE salary > 1000;",
    );
    expect(whole.outcome).toBe("passed");
  });
});

describe("validate: a dialogue", () => {
  it("runs Python blocks notebook-style across turns: a later block sees earlier definitions", async () => {
    const v = await validateDialogue(
      {
        messages: turns(
          [
            "Define a stack.",
            fence(
              "python",
              "class Stack:\n    def __init__(self):\n        self.items = []\n    def push(self, x):\n        self.items.append(x)",
            ),
          ],
          ["Use it.", fence("python", "s = Stack()\ns.push(3)\nprint(s.items)")],
          ["And the size?", fence("python", "print(len(s.items))")],
        ),
      },
      run,
    );
    expect(v.outcome).toBe("passed");
    expect(v.blocks.map((b) => [b.message, b.outcome, b.harness])).toEqual([
      [1, "passed", "as-is"],
      [3, "passed", "notebook"],
      [5, "passed", "notebook"],
    ]);
  });

  it("outcome of the final code: a corrected error passes; a regression fails", async () => {
    const corrected = await validateDialogue(
      {
        messages: turns(
          [
            "Average of a list.",
            fence("python", "def mean(xs):\n    return sum(xs) / len(xs)\nprint(mean([]))"),
          ],
          [
            "Execution result: \nZeroDivisionError: division by zero",
            fence("python", "def mean(xs):\n    return sum(xs) / len(xs) if xs else 0.0\nprint(mean([]))"),
          ],
        ),
      },
      run,
    );
    expect(corrected.outcome).toBe("passed");
    expect(corrected.blocks.map((b) => b.outcome)).toEqual(["failed", "passed"]);

    const regressed = await validateDialogue(
      {
        messages: turns(
          ["Say hi.", fence("python", "print('hi')")],
          ["Now greet by name.", fence("python", "print('hi ' + nme)")],
        ),
      },
      run,
    );
    expect(regressed).toMatchObject({ outcome: "failed", final_message: 3 });
    expect(regressed.error).toContain("NameError");
  });

  it("a later block that uses what a not-runnable block would define is not runnable for the same reason", async () => {
    const v = await validateDialogue(
      {
        messages: turns(
          ["Load the data.", fence("python", "import nonexistentpkg\ntable = nonexistentpkg.load('x.csv')")],
          ["Show it.", fence("python", "print(table)")],
        ),
      },
      run,
    );
    expect(v).toMatchObject({ outcome: "not-runnable", reason: "missing-package" });
    expect(v.blocks[1]!.error).toContain("message 1");
  });

  it("a final answer whose worst block fails fails, an install line next to passing code does not", async () => {
    const mixed = await validateDialogue(
      {
        messages: turns([
          "Install and run.",
          `${fence("bash", "pip install rich")}\n\nThen:\n${fence("python", "print(2 + 2)")}`,
        ]),
      },
      run,
    );
    expect(mixed.outcome).toBe("passed");
    const worst = await validateDialogue(
      {
        messages: turns([
          "Two blocks.",
          `${fence("python", "print(1)")}\n${fence("python", "raise ValueError('bad')")}`,
        ]),
      },
      run,
    );
    expect(worst).toMatchObject({ outcome: "failed", error: "ValueError: bad" });
    const none = await validateDialogue({ messages: turns(["Explain.", "It depends."]) }, run);
    expect(none).toEqual({ outcome: "no-code", blocks: [] });
  });

  it("a sandbox that says it has no toolchain tags the block not runnable, by the answer's type", async () => {
    // a server without a JDK, answering as ours do: the refusal carries its `problem`
    const noJava: CodeRunner = {
      run: (request, options) =>
        request.language === "java"
          ? Promise.resolve(sandboxErrorResponse("the JDK is missing on this server", "toolchain_missing"))
          : sandbox.run(request, options),
      close: async () => {},
    };
    const settings = { run_timeout_s: 2, compile_timeout_s: 120, backoff_ms: 1 };
    const there: RunProgram = (code, lang, previous) =>
      executeBlock(noJava, code, lang, settings, { previous });
    const java = fence(
      "java",
      'class Main { public static void main(String[] a) { System.out.println("hi"); } }',
    );
    const v = await validateDialogue({ messages: turns(["Write it.", `Here:\n${java}`]) }, there);
    expect(v).toMatchObject({ outcome: "not-runnable", reason: "language-unavailable" });
    expect(v.blocks[0]).toMatchObject({ error: "the JDK is missing on this server" });
  });
});
