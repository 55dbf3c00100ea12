// The one line validate quotes for a failed block (its tags, reject details and the review app): the
// line that names the problem, whatever the language's tool prints around it.
import { describe, expect, it } from "vitest";
import type { ExecutionResult } from "../../pipeline/execution/index.js";
import { errorLine } from "../../stages/validate/causes.js";

const failed = (stderr: string, status: ExecutionResult["status"] = "runtime-error"): ExecutionResult => ({
  status,
  language: "python",
  exitCode: 1,
  signal: null,
  timeS: 0.01,
  stdout: "",
  stderr,
  truncated: false,
});

describe("validate's error line", () => {
  it("quotes the exception a traceback ends with", () => {
    const traceback =
      'Traceback (most recent call last):\n  File "/work/main.py", line 2, in <module>\n    f()\nZeroDivisionError: division by zero\n';
    expect(errorLine(failed(traceback))).toBe("ZeroDivisionError: division by zero");
  });

  it("quotes sqlite3's lower-case parse error, not the caret under the statement", () => {
    const sqlite =
      "Parse error near line 1: near \"'30 days'\": syntax error\n  SELECT * FROM t WHERE d > now() - INTERVAL '30 days';\n                                              ^--- error here\n";
    expect(errorLine(failed(sqlite))).toBe("Parse error near line 1: near \"'30 days'\": syntax error");
  });

  it("falls back to the last line where nothing says error", () => {
    expect(errorLine(failed("main.sh: line 3: frobnicate: command not found\n"))).toBe(
      "main.sh: line 3: frobnicate: command not found",
    );
  });

  it("quotes a compiler's first error line", () => {
    const gcc =
      "main.c: In function 'main':\nmain.c:3:5: error: 'x' undeclared\nmain.c:4:5: error: expected ';'\n";
    expect(errorLine(failed(gcc, "compile-error"))).toBe("main.c:3:5: error: 'x' undeclared");
  });
});
