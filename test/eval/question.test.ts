import { describe, expect, it } from "vitest";
import { ALL_LANGUAGES, generateTests, sandboxLanguages } from "../../pipeline/eval/generate.js";
import { parseQuestion } from "../../pipeline/eval/question.js";
import { SchemaError } from "../../pipeline/eval/schema-type.js";
import { EvalInputError } from "../../pipeline/eval/types.js";

const base = {
  question_id: 7,
  title: "Add",
  entry_fn_name: "add",
  schema: {
    params: [
      { name: "a", type: "integer" },
      { name: "b", type: "integer" },
    ],
    return: { type: "integer" },
  },
  test_cases: [{ idx: 0, inputs: { a: 1, b: 2 }, outputs: 3 }],
};

describe("parseQuestion", () => {
  it("reads a BabelCode question", () => {
    expect(parseQuestion(base)).toEqual({
      questionId: "7",
      title: "Add",
      params: [
        { name: "a", type: { kind: "integer" } },
        { name: "b", type: { kind: "integer" } },
      ],
      returnType: { kind: "integer" },
      testCases: [{ idx: "0", inputs: { a: 1, b: 2 }, outputs: 3 }],
      entryFnName: "add",
    });
  });

  it("accepts BabelCode's test_list spelling", () => {
    const { test_cases, ...rest } = base;
    expect(parseQuestion({ ...rest, test_list: test_cases }).testCases).toHaveLength(1);
  });

  it.each([
    [{ ...base, question_id: undefined }, "question has no question_id"],
    [{ ...base, test_cases: [] }, "test_cases must be a non-empty list"],
    [
      { ...base, test_cases: [{ idx: "a b", inputs: { a: 1, b: 2 }, outputs: 3 }] },
      "must match [A-Za-z0-9_-]+",
    ],
    [{ ...base, test_cases: [{ idx: 0, inputs: { a: 1 }, outputs: 3 }] }, 'gives no value for parameter "b"'],
    [{ ...base, test_cases: [{ idx: 0, inputs: { a: 1, b: 2, c: 3 }, outputs: 3 }] }, 'has input "c"'],
    [
      { ...base, test_cases: [{ idx: 0, inputs: { a: 1, b: 2 }, outputs: "3" }] },
      "test 0 outputs: expected a 32-bit integer",
    ],
    [
      {
        ...base,
        test_cases: [
          { idx: 0, inputs: { a: 1, b: 2 }, outputs: 3 },
          { idx: 0, inputs: { a: 1, b: 2 }, outputs: 3 },
        ],
      },
      "is used twice",
    ],
    [
      { ...base, schema: { ...base.schema, params: [{ name: "a-b", type: "integer" }] } },
      "must be an identifier",
    ],
  ])("rejects a malformed question (%#)", (raw, message) => {
    expect(() => parseQuestion(raw)).toThrow(SchemaError);
    expect(() => parseQuestion(raw)).toThrow(message);
  });
});

describe("generateTests", () => {
  const line = (value: unknown, n: number) => ({ value, line: n });

  it("lists malformed questions and inexpressible types with their reasons, never skipping silently", () => {
    const accented = {
      ...base,
      question_id: "accent",
      schema: { params: [{ name: "s", type: "string" }], return: { type: "character" } },
      test_cases: [{ idx: 0, inputs: { s: "é" }, outputs: "é" }],
    };
    const emoji = {
      ...accented,
      question_id: "emoji",
      test_cases: [{ idx: 0, inputs: { s: "x" }, outputs: "😀" }],
    };
    const broken = {
      ...base,
      question_id: "broken",
      schema: { ...base.schema, return: { type: "set<float>" } },
    };
    const result = generateTests(
      [line(base, 1), line(accented, 2), line(emoji, 3), line(broken, 4)],
      ["python", "cpp", "java", "csharp", "haskell", "sql"],
    );
    expect(result.tests.map((t) => `${t.qid}/${t.language}`)).toEqual([
      "7/python",
      "7/cpp",
      "7/java",
      "7/csharp",
      "accent/python",
      "accent/java",
      "accent/csharp",
      "emoji/python",
    ]);
    const noHarness = expect.stringContaining("no harness generator for haskell");
    const noSql = expect.stringMatching(/^SQL has no functions a test can call/);
    expect(result.failures).toEqual([
      { qid: "7", language: "haskell", reason: noHarness },
      { qid: "7", language: "sql", reason: noSql },
      { qid: "accent", language: "cpp", reason: 'C++ char holds one byte; character "é" does not fit' },
      { qid: "accent", language: "haskell", reason: noHarness },
      { qid: "accent", language: "sql", reason: noSql },
      { qid: "emoji", language: "cpp", reason: 'C++ char holds one byte; character "😀" does not fit' },
      {
        qid: "emoji",
        language: "java",
        reason: 'Java char holds one UTF-16 unit; character "😀" does not fit',
      },
      {
        qid: "emoji",
        language: "csharp",
        reason: 'C# char holds one UTF-16 unit; character "😀" does not fit',
      },
      { qid: "emoji", language: "haskell", reason: noHarness },
      { qid: "emoji", language: "sql", reason: noSql },
      {
        qid: "broken",
        language: ALL_LANGUAGES,
        reason: expect.stringContaining(
          'line 4: type "set<float>": set keys must be character, integer or string',
        ),
      },
    ]);
  });

  it("gives class-based languages a default class and the others none", () => {
    const { tests } = generateTests([line(base, 1)], ["java", "python"]);
    expect(tests.map((t) => [t.language, t.entry_fn_name, t.entry_cls_name, t.test_case_ids])).toEqual([
      ["java", "add", "Solution", ["0"]],
      ["python", "add", undefined, ["0"]],
    ]);
  });

  it("names the entry function in each language's style, as BabelCode's generated tests do", () => {
    const question = { ...base, entry_fn_name: "groupByLength", entry_point: "ignored" };
    const { tests } = generateTests([line(question, 1)]);
    const names = Object.fromEntries(tests.map((t) => [t.language, t.entry_fn_name]));
    expect(names).toEqual({
      python: "group_by_length",
      javascript: "groupByLength",
      typescript: "groupByLength",
      c: "group_by_length",
      cpp: "groupByLength",
      java: "groupByLength",
      go: "groupByLength",
      rust: "group_by_length",
      csharp: "GroupByLength",
      php: "groupByLength",
      ruby: "group_by_length",
      perl: "group_by_length",
      lua: "group_by_length",
      r: "group_by_length",
      scala: "groupByLength",
    });
  });

  it("defaults to every language the sandbox runs, and takes entry_point and class_name as aliases", () => {
    const question = { ...base, entry_fn_name: undefined, entry_point: "add_up", class_name: "Adder" };
    const { tests, failures } = generateTests([line(question, 1)]);
    expect(sandboxLanguages().sort()).toEqual(
      [...tests.map((t) => t.language), ...failures.map((f) => f.language)].sort(),
    );
    expect(failures.map((f) => f.language).sort()).toEqual(["racket", "shell", "sql", "verilog"]);
    expect(tests.find((t) => t.language === "java")).toMatchObject({
      entry_fn_name: "addUp",
      entry_cls_name: "Adder",
    });
  });

  it("refuses two questions with one id", () => {
    expect(() => generateTests([line(base, 1), line(base, 5)], ["python"], "q.jsonl")).toThrow(
      EvalInputError,
    );
    expect(() => generateTests([line(base, 1), line(base, 5)], ["python"], "q.jsonl")).toThrow(
      "q.jsonl:5: question_id 7 was already used on line 1",
    );
  });
});
