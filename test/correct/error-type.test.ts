// The kind of mistake a run shows, as correct reads it from what each toolchain says.
import { describe, expect, it } from "vitest";
import { errorTypeOf } from "../../stages/correct/error-type.js";
import type { JournaledRun } from "../../stages/dialogue-kit/journal.js";

const run = (status: JournaledRun["status"], errorTail: string): JournaledRun => ({
  status,
  exitCode: 1,
  signal: null,
  timeS: 0.1,
  truncated: false,
  feedback: "",
  errorTail,
});

describe("the kind of mistake a run shows", () => {
  it("names the paper's five kinds from what each toolchain says", () => {
    expect(errorTypeOf(run("runtime-error", "SyntaxError: invalid syntax"), false)).toBe("syntax");
    expect(errorTypeOf(run("runtime-error", "NameError: name 'x' is not defined"), false)).toBe("name");
    expect(
      errorTypeOf(run("runtime-error", "ReferenceError: x is not defined\n    at main.js:1"), false),
    ).toBe("name");
    expect(
      errorTypeOf(run("runtime-error", 'TypeError: can only concatenate str (not "int") to str'), false),
    ).toBe("type");
    expect(errorTypeOf(run("compile-error", "main.go:5:9: undefined: total"), false)).toBe("name");
    expect(errorTypeOf(run("compile-error", "main.cpp:3: error: expected ';' before '}' token"), false)).toBe(
      "syntax",
    );
    expect(errorTypeOf(run("timeout", ""), false)).toBe("timeout");
    expect(errorTypeOf(run("runtime-error", "AssertionError"), true)).toBe("logical");
    expect(errorTypeOf(run("runtime-error", "IndexError: list index out of range"), false)).toBe("other");
  });
});
