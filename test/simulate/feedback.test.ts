// The pieces simulate and correct read model answers and runs with: the feedback JSON as models write
// it, the feedback category, the kind of mistake a run shows, the code of an answer, the sample.
import { describe, expect, it } from "vitest";
import { errorTypeOf } from "../../stages/correct/error-type.js";
import { codeOfAnswer } from "../../stages/dialogue-kit/code.js";
import type { JournaledRun } from "../../stages/dialogue-kit/journal.js";
import { selectRecords } from "../../stages/dialogue-kit/sample.js";
import { categoryOfText, namedCategory } from "../../stages/simulate/categories.js";
import { readFeedback } from "../../stages/simulate/feedback.js";
import { collect } from "../support/runner-kit.js";

describe("feedback JSON", () => {
  it("reads bare, fenced, prose-wrapped and trailing-comma JSON, and list values", () => {
    const want = { feedback: "Add tests.", satisfied: "Works.", not_satisfied: "No tests." };
    const body = '{"satisfied": "Works.", "not_satisfied": "No tests.", "feedback": "Add tests."}';
    expect(readFeedback(body)).toMatchObject({ ok: true, value: want });
    expect(readFeedback(`Sure:\n\`\`\`json\n${body}\n\`\`\`\nThanks`)).toMatchObject({
      ok: true,
      value: want,
    });
    expect(readFeedback(`My view: ${body} That is all.`)).toMatchObject({ ok: true, value: want });
    expect(
      readFeedback(
        '{\n "satisfied": "Works.",\n "not_satisfied": "No tests.",\n "feedback": "Add tests.",\n}',
      ),
    ).toMatchObject({ ok: true, value: want });
    expect(
      readFeedback('{"satisfied": ["Works.", "Fast."], "not_satisfied": [], "feedback": "Add tests."}'),
    ).toMatchObject({ ok: true, value: { satisfied: "Works.; Fast.", not_satisfied: "" } });
  });

  it("reads a Python dict: single quotes, apostrophes and double quotes inside, True/None, a trailing comma", () => {
    expect(
      readFeedback(
        `Here you go: {'satisfied': 'It prints "6".', 'not_satisfied': 'It\\'s untested', 'feedback': "Add the user's tests.", 'done': True, 'extra': None,}`,
      ),
    ).toMatchObject({
      ok: true,
      value: {
        satisfied: 'It prints "6".',
        not_satisfied: "It's untested",
        feedback: "Add the user's tests.",
      },
    });
  });

  it("refuses answers without a feedback text, and braces inside strings do not confuse it", () => {
    expect(readFeedback("The code looks fine.")).toMatchObject({ ok: false });
    expect(readFeedback('{"satisfied": "x", "not_satisfied": "y"}')).toMatchObject({ ok: false });
    expect(
      readFeedback('{"satisfied": "a } b", "not_satisfied": "{", "feedback": "Use a dict {}."}'),
    ).toMatchObject({ ok: true, value: { feedback: "Use a dict {}." } });
  });

  it("takes the category a model names, else reads it from the words", () => {
    expect(namedCategory("5. Bug Identification")).toBe("bug-identification");
    expect(namedCategory("Security Improvements")).toBe("security-improvements");
    expect(namedCategory(9)).toBe("scalability");
    expect(readFeedback('{"feedback": "Fix it.", "category": "Efficiency"}')).toMatchObject({
      ok: true,
      value: { category: "efficiency", category_source: "model" },
    });
    expect(categoryOfText("Sanitize the user input to avoid SQL injection.")).toBe("security-improvements");
    expect(categoryOfText("Consider how this would scale to larger datasets.")).toBe("scalability");
    expect(categoryOfText("Hello.")).toBe("unclassified");
  });
});

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

describe("the code of an answer", () => {
  it("runs every Python block in order as one cell, and the main block elsewhere", () => {
    const py =
      "Define:\n```python\ndef f():\n    return 1\n```\nUse:\n```python\nprint(f())\n```\nOutput:\n```\n1\n```";
    expect(codeOfAnswer(py, "python")).toEqual({
      lang: "python",
      code: "def f():\n    return 1\n\nprint(f())",
    });
    const js =
      "```javascript\nconsole.log(1);\nconsole.log(2);\n```\nor\n```javascript\nconsole.log(3);\n```";
    expect(codeOfAnswer(js, "javascript")).toEqual({
      lang: "javascript",
      code: "console.log(1);\nconsole.log(2);",
    });
    expect(codeOfAnswer("No code here, only words.", "python")).toBeUndefined();
    expect(codeOfAnswer("```html\n<p>hi</p>\n```", "html")).toBeUndefined();
  });
});

describe("the seeded sample", () => {
  const records = Array.from({ length: 40 }, (_, i) => ({
    id: `r:${i}`,
    lang: i % 4 === 0 ? "html" : i % 2 ? "python" : "cpp",
  }));
  const read = async function* () {
    yield* records;
  };
  it("takes runnable languages, a seeded count, in upstream order, the same on every call", async () => {
    const all = await collect(selectRecords(read, { languages: "runnable", seed: 1 }));
    expect(all).toHaveLength(30);
    const some = await collect(selectRecords(read, { languages: ["python"], count: 5, seed: 1 }));
    expect(some).toHaveLength(5);
    expect(some.every((r) => r.lang === "python")).toBe(true);
    const ids = some.map((r) => Number(r.id.slice(2)));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(await collect(selectRecords(read, { languages: ["python"], count: 5, seed: 1 }))).toEqual(some);
    const other = await collect(selectRecords(read, { languages: ["python"], count: 5, seed: 2 }));
    expect(other).not.toEqual(some);
  });
});
