// Reading TACO's rows: which are LeetCode's, and why a malformed one is rejected.
import { describe, expect, it } from "vitest";
import { parseStringList, parseTests, readTacoRow, rowSource } from "../../stages/leetcode/taco.js";

const where = { id: "taco:train:000001", repo: "BAAI/TACO", file: "ALL/train.parquet", row: 1, commit: "c" };

function row(fields: Record<string, unknown> = {}) {
  return {
    question: "Return n + 1.",
    solutions: JSON.stringify(["class Solution:\n    def inc(self, n):\n        return n + 1\n"]),
    starter_code: "class Solution:\n    def inc(self, n: int) -> int:\n        ",
    input_output: JSON.stringify({ inputs: [[1]], outputs: [2], fn_name: "inc" }),
    difficulty: "EASY",
    name: "increment",
    source: "leetcode",
    tags: "['Math', \"Bob's Tag\"]",
    skill_types: "[]",
    url: "https://example.org/leetcode/increment",
    "Expected Time Complexity": "O(1)",
    "Expected Auxiliary Space": "",
    ...fields,
  };
}

describe("TACO rows", () => {
  it("reads a LeetCode row with its tests, tags and expected complexity", () => {
    const result = readTacoRow(row(), where, ["leetcode"]);
    expect(result.kind).toBe("problem");
    if (result.kind !== "problem") return;
    expect(result.problem).toMatchObject({
      id: where.id,
      name: "increment",
      tests: { style: "call", fnName: "inc", inputs: [[1]], outputs: [2] },
      tags: ["Math", "Bob's Tag"],
      expectedTime: "O(1)",
      expectedSpace: undefined,
    });
  });

  it("recognises LeetCode by the source column, else by a leetcode.com url", () => {
    expect(rowSource({ source: "LeetCode" })).toBe("leetcode");
    expect(rowSource({ source: "", url: "https://leetcode.com/problems/two-sum/" })).toBe("leetcode");
    expect(rowSource({ source: "codeforces", url: "https://leetcode.com/x" })).toBe("codeforces");
    expect(readTacoRow(row({ source: "codechef" }), where, ["leetcode"])).toEqual({
      kind: "other-source",
      source: "codechef",
    });
  });

  it.each([
    [{ solutions: '["print(1)"' }, "bad-solutions", /not JSON/],
    [{ solutions: JSON.stringify([1, 2]) }, "bad-solutions", /list of programs/],
    [{ solutions: "[]" }, "no-solutions", /no solution/],
    [{ input_output: "" }, "no-tests", /empty/],
    [{ input_output: '{"inputs": [' }, "bad-tests", /not JSON/],
    [{ input_output: JSON.stringify({ inputs: [], outputs: [] }) }, "no-tests", /no test cases/],
    [{ input_output: JSON.stringify({ inputs: ["1"], outputs: [] }) }, "bad-tests", /1 inputs but 0 outputs/],
    [{ input_output: JSON.stringify({ inputs: [1], outputs: [2] }) }, "bad-tests", /must be strings/],
    [{ question: "  " }, "no-question", /empty/],
    [{ tags: "Math, DP" }, "bad-tags", /not a list/],
  ])("rejects %j as %s", (fields, reason, detail) => {
    const result = readTacoRow(row(fields), where, ["leetcode"]);
    expect(result.kind).toBe("reject");
    if (result.kind !== "reject") return;
    expect(result.reject.reason).toBe(reason);
    expect(result.reject.detail).toMatch(detail);
    expect(result.reject.detail).toContain("ALL/train.parquet row 1");
  });

  it("reads stdin/stdout tests, and a lone call argument as a one-argument list", () => {
    expect(parseTests(JSON.stringify({ inputs: ["1\n"], outputs: ["2\n"] }))).toEqual({
      style: "stdio",
      inputs: ["1\n"],
      outputs: ["2\n"],
    });
    expect(parseTests(JSON.stringify({ inputs: [5], outputs: [6], fn_name: "f" }))).toMatchObject({
      inputs: [[5]],
    });
  });

  it("reads TACO's Python list literals", () => {
    expect(parseStringList("['Array', 'Hash Table']")).toEqual(["Array", "Hash Table"]);
    expect(parseStringList("[\"a\", 'b\\'c']")).toEqual(["a", "b'c"]);
    expect(parseStringList("[]")).toEqual([]);
    expect(parseStringList("")).toEqual([]);
    expect(parseStringList("['a' 'b']")).toBeUndefined();
    expect(parseStringList("['a'")).toBeUndefined();
  });
});
