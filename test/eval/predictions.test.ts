import { describe, expect, it } from "vitest";
import { parsePredictions } from "../../pipeline/eval/predictions.js";
import { EvalInputError } from "../../pipeline/eval/types.js";

const lines = (...values: unknown[]) => values.map((value, i) => ({ value, line: i + 1 }));

describe("parsePredictions", () => {
  it("maps BabelCode language names and the entry_point/class_name aliases", () => {
    expect(
      parsePredictions(
        lines(
          { qid: 0, id: 0, language: "C++", code: "x", entry_point: "f" },
          { qid: "0", id: "0", language: "Java", code: "y", entry_point: "f", class_name: "Solution" },
          { qid: "0", id: "1", language: "Python", code: "z", entry_fn_name: "g" },
        ),
      ),
    ).toEqual([
      { qid: "0", id: "0", language: "cpp", code: "x", entry_fn_name: "f" },
      { qid: "0", id: "0", language: "java", code: "y", entry_fn_name: "f", entry_cls_name: "Solution" },
      { qid: "0", id: "1", language: "python", code: "z", entry_fn_name: "g" },
    ]);
  });

  it("refuses two predictions with one id for one question in one language", () => {
    const duplicate = lines(
      { qid: "q", id: "a", language: "python", code: "" },
      { qid: "q", id: "a", language: "py", code: "" },
    );
    expect(() => parsePredictions(duplicate, "p.jsonl")).toThrow(EvalInputError);
    expect(() => parsePredictions(duplicate, "p.jsonl")).toThrow(
      'p.jsonl:2: prediction id "a" for question q in python repeats line 1',
    );
  });

  it.each([
    [{ id: 1, language: "python", code: "" }, '"qid" (the question id) is missing'],
    [{ qid: 1, language: "python", code: "" }, '"id" (the prediction id) is missing'],
    [{ qid: 1, id: 1, language: "klingon", code: "" }, 'unknown language "klingon"'],
    [{ qid: 1, id: 1, language: "python" }, '"code" must be a string'],
    [
      { qid: 1, id: 1, language: "python", code: "", entry_fn_name: "a b" },
      '"entry_fn_name" must be an identifier',
    ],
  ])("explains what is wrong (%#)", (value, message) => {
    expect(() => parsePredictions(lines(value))).toThrow(message);
  });
});
