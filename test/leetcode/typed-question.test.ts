// LeetCode's Python annotations as BabelCode types, so a translation can be judged by the eval
// library's harness of its language.
import { describe, expect, it } from "vitest";
import { babelType, starterSignature, typedQuestion } from "../../stages/leetcode/typed-question.js";

describe("typed questions from starter code", () => {
  it("maps annotations onto BabelCode's types", () => {
    expect(babelType("int")).toBe("integer");
    expect(babelType("List[List[int]]")).toBe("list<list<integer>>");
    expect(babelType("Dict[str, List[float]]")).toBe("map<string;list<double>>");
    expect(babelType("Set[str]")).toBe("set<string>");
    expect(babelType("Optional[TreeNode]")).toBeUndefined();
    expect(babelType("Dict[List[int], int]")).toBeUndefined();
  });

  it("reads the signature of fn_name, and says why when it cannot", () => {
    const starter =
      "class Solution:\n    def twoSum(self, nums: List[int], target: int) -> List[int]:\n        ";
    expect(starterSignature(starter, "twoSum")).toEqual({
      params: [
        { name: "nums", type: "list<integer>" },
        { name: "target", type: "integer" },
      ],
      returns: "list<integer>",
    });
    expect(starterSignature(starter, "other")).toEqual({
      error: expect.stringMatching(/does not define other/),
    });
    const tree = "class Solution:\n    def depth(self, root: Optional[TreeNode]) -> int:\n";
    expect(starterSignature(tree, "depth")).toEqual({
      error: expect.stringMatching(/root: Optional\[TreeNode\]/),
    });
  });

  it("unwraps TACO's one-element lists only where the bare value fits, and widens big integers", () => {
    const signature = { params: [{ name: "n", type: "integer" }], returns: "list<integer>" };
    const question = typedQuestion("q", "f", signature, {
      inputs: [[1], [3_000_000_000]],
      outputs: [[[1, 2]], [5]],
    });
    if ("error" in question) throw new Error(question.error);
    expect(question.testCases.map((t) => t.outputs)).toEqual([[1, 2], [5]]);
    expect(question.params[0]!.type).toEqual({ kind: "long" });
    const wrongArity = typedQuestion("q", "f", signature, { inputs: [[1, 2]], outputs: [[1]] });
    expect(wrongArity).toEqual({ error: expect.stringMatching(/1 arguments/) });
  });
});
