// Follow-up plans: which solution comes first, which follow-ups a problem allows, and the seed.
import { describe, expect, it } from "vitest";
import { leetcodeConfigSchema } from "../../stages/leetcode/config.js";
import { loopDepth, planFollowUp } from "../../stages/leetcode/follow-up.js";
import type { TacoProblem } from "../../stages/leetcode/taco.js";
import type { ValidatedProblem } from "../../stages/leetcode/validate-solutions.js";

const config = leetcodeConfigSchema.parse({}).follow_up;
const passed = { verdict: "passed" as const, tests: 1, passed: 1 };

const NESTED = "for i in a:\n    for j in a:\n        pass\n";
const FLAT = "for x in a:\n    pass\n";
const NONE = "return sum(a)\n";

function validated(codes: string[], fields: Partial<TacoProblem> = {}): ValidatedProblem {
  const passing = codes.map((code, index) => ({ index, code, judged: passed }));
  return {
    problem: {
      id: "p",
      name: "p",
      question: "q",
      starterCode: "",
      solutions: codes,
      tests: { style: "call", fnName: "f", inputs: [[1]], outputs: [1] },
      difficulty: "",
      tags: [],
      skillTypes: [],
      source: "leetcode",
      url: "",
      expectedTime: undefined,
      expectedSpace: undefined,
      origin: { repo: "", file: "", row: 0, commit: "" },
      ...fields,
    },
    passing,
    judged: passing,
  };
}

describe("follow-up plans", () => {
  it("measures loop nesting, comprehensions included", () => {
    expect(loopDepth(NESTED)).toBe(2);
    expect(loopDepth(FLAT)).toBe(1);
    expect(loopDepth(NONE)).toBe(0);
    expect(loopDepth("x = [i * j for i in a for j in b]\n")).toBe(2);
    expect(loopDepth("for i in a:\n    pass\nfor j in b:\n    pass\n")).toBe(1);
    expect(loopDepth("while x:\n    # for nothing\n    y = [k for k in z]\n")).toBe(2);
  });

  it("asks for TACO's expected complexity and answers with the shallower solution after the deeper one", () => {
    const plan = planFollowUp(validated([FLAT, NESTED], { expectedTime: "O(n)" }), config, [], 1)!;
    expect(plan.first.code).toBe(NESTED);
    expect(plan.steps).toHaveLength(1);
    expect(plan.steps[0]).toMatchObject({ kind: "complexity", solution: { code: FLAT } });
    expect(plan.steps[0]!.question).toContain("O(n)");
    const both = planFollowUp(
      validated([FLAT, NESTED], { expectedTime: "O(n)", expectedSpace: "O(1)" }),
      config,
      [],
      2,
    )!;
    expect(both.steps[0]!.question).toMatch(/O\(n\)[\s\S]*O\(1\)/);
  });

  it("asks for another approach when TACO names no complexity, and plans translations within max_turns", () => {
    const plan = planFollowUp(validated([FLAT, NESTED]), config, ["java", "cpp", "javascript"], 3)!;
    expect(plan.steps.map((s) => s.kind)).toEqual(["alternative", "language", "language"]);
    const languages = plan.steps.flatMap((s) => (s.kind === "language" ? [s.language] : []));
    expect(new Set(languages).size).toBe(2);
    const short = planFollowUp(validated([FLAT, NESTED]), { ...config, max_turns: 2 }, ["java"], 3)!;
    expect(short.steps.map((s) => s.kind)).toEqual(["alternative"]);
  });

  it("plans nothing for a single solution and no language, and the same plan for the same seed", () => {
    expect(planFollowUp(validated([FLAT]), config, [], 1)).toBeUndefined();
    const single = planFollowUp(validated([FLAT]), config, ["java"], 1)!;
    expect(single.first.code).toBe(FLAT);
    expect(single.steps).toEqual([expect.objectContaining({ kind: "language", language: "java" })]);
    expect(single.steps[0]!.question).toMatch(/Java/);
    const a = planFollowUp(validated([FLAT, NESTED]), config, ["java", "cpp", "javascript"], 9);
    expect(planFollowUp(validated([FLAT, NESTED]), config, ["java", "cpp", "javascript"], 9)).toEqual(a);
  });

  it("leaves out kinds the config does not list", () => {
    const only = { ...config, kinds: ["language" as const] };
    expect(planFollowUp(validated([FLAT, NESTED], { expectedTime: "O(n)" }), only, [], 1)).toBeUndefined();
  });
});
