// runBlock against the real embedded sandbox: Python blocks of one session see each other's
// definitions and only the new block's output shows; other languages run as whole programs.
import { afterAll, describe, expect, it } from "vitest";
import { executionFeedback, runBlock } from "../../pipeline/execution/index.js";
import { EmbeddedSandbox } from "../../pipeline/sandbox/index.js";
import { testConfig } from "../sandbox/helpers.js";

const sandbox = new EmbeddedSandbox(testConfig());
afterAll(() => sandbox.close());

describe("runBlock", () => {
  it("runs Python notebook-style: earlier blocks' names are defined, their output is not shown", async () => {
    const first = "def area(r):\n    return 3 * r * r\nprint('defined area')\n";
    const second = "print(area(2))\n";
    const result = await runBlock(sandbox, second, "python", { previous: [first] });
    expect(result.status).toBe("success");
    expect(result.stdout).toBe("12\n");
  });

  it("ignores an earlier block that raised, and reports the new block's own traceback lines", async () => {
    const broken = "x = 1\nraise ValueError('shown when it ran')\n";
    const cell = "y = x + 1\nprint(y)\nprint(undefined_name)\n";
    const result = await runBlock(sandbox, cell, "python", { previous: [broken] });
    expect(result.status).toBe("runtime-error");
    expect(result.stdout).toBe("2\n");
    expect(result.stderr).toContain("NameError: name 'undefined_name' is not defined");
    expect(result.stderr).toContain('File "<cell 2>", line 3');
    expect(result.stderr).toContain("print(undefined_name)");
    expect(result.stderr).not.toContain("shown when it ran");
    expect(result.stderr).not.toContain("_nb_");
    expect(executionFeedback(result)).toMatch(/^Execution result: \n2\nTraceback/);
  });

  it("keeps exit codes of sys.exit and a time-out in a cell", async () => {
    const exited = await runBlock(sandbox, "import sys\nsys.exit(3)\n", "python", { previous: ["a = 1\n"] });
    expect(exited).toMatchObject({ status: "runtime-error", exitCode: 3 });
    const slow = await runBlock(sandbox, "while True:\n    pass\n", "python", {
      previous: ["a = 1\n"],
      runTimeoutS: 1,
    });
    expect(slow.status).toBe("timeout");
    expect(executionFeedback(slow)).toBe("Execution result: \nExecution timed out");
  });

  it("runs compiled languages as whole programs and checks expected output", async () => {
    const program =
      '#include <stdio.h>\nint main(void) { int a, b; scanf("%d %d", &a, &b); printf("%d\\n", a + b); return 0; }\n';
    const ok = await runBlock(sandbox, program, "c", {
      stdin: "2 3\n",
      expected: { input: "2 3", expected: "5" },
    });
    expect(ok.status).toBe("success");
    const wrong = await runBlock(sandbox, program, "c", {
      stdin: "2 2\n",
      expected: { input: "2 2", expected: "5" },
    });
    expect(wrong.status).toBe("wrong-output");
    expect(executionFeedback(wrong)).toBe(
      "Execution result: \nInput: 2 2\nExpected output: 5\nActual output: 4",
    );
    const broken = await runBlock(sandbox, "int main(void) { return undefined_thing; }\n", "c");
    expect(broken.status).toBe("compile-error");
    expect(broken.stderr).toContain("undefined_thing");
  });
});
