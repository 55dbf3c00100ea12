// Grouping problems by shared tags: who may join whom, sizes, the target, and the seed.
import { describe, expect, it } from "vitest";
import { type GroupingOptions, groupSimilarProblems } from "../../stages/leetcode/grouping.js";

const problems = [
  { id: "a", tags: ["Array", "Hash Table"] },
  { id: "b", tags: ["Array", "Hash Table", "Sorting"] },
  { id: "c", tags: ["Array"] },
  { id: "d", tags: ["Dynamic Programming"] },
  { id: "e", tags: ["Dynamic Programming", "String"] },
  { id: "f", tags: ["String"] },
  { id: "g", tags: ["Graph"] },
  { id: "h", tags: [] },
];

const base: GroupingOptions = { match: "any", minShared: 1, ignore: [], sizes: [2], target: 100, seed: 1 };

function tagsOf(i: number) {
  return problems[i]!.tags;
}

describe("similar-problem grouping", () => {
  it("joins only problems sharing a tag with the seed problem, each problem at most once", () => {
    for (let seed = 0; seed < 20; seed++) {
      const result = groupSimilarProblems(problems, { ...base, seed, sizes: [2, 3] });
      const used = result.groups.flatMap((g) => g.members);
      expect(new Set(used).size).toBe(used.length);
      for (const g of result.groups) {
        const [head, ...rest] = g.members;
        for (const m of rest) expect(tagsOf(m).some((t) => tagsOf(head!).includes(t))).toBe(true);
        expect(g.members.length).toBeGreaterThanOrEqual(2);
        expect(g.members.length).toBeLessThanOrEqual(3);
      }
      // g has no partner and h no tag: never grouped
      expect(used).not.toContain(6);
      expect(used).not.toContain(7);
      expect(result.untagged).toBe(1);
    }
  });

  it("prefers the partner sharing the most tags", () => {
    let checked = 0;
    for (let seed = 0; seed < 20; seed++) {
      const g = groupSimilarProblems(problems.slice(0, 3), { ...base, seed, target: 1 }).groups[0]!;
      // a and b share two tags, c shares one with each
      if (g.members[0] === 0) expect(g.members).toEqual([0, 1]);
      if (g.members[0] === 1) expect(g.members).toEqual([1, 0]);
      if (g.members[0] !== 2) checked++;
      expect(g.shared.length).toBeGreaterThan(0);
    }
    expect(checked).toBeGreaterThan(0);
  });

  it("is the same for the same seed, and stops at the target", () => {
    const one = groupSimilarProblems(problems, { ...base, seed: 7 });
    expect(groupSimilarProblems(problems, { ...base, seed: 7 })).toEqual(one);
    expect(groupSimilarProblems(problems, { ...base, target: 1 }).groups).toHaveLength(1);
    expect(groupSimilarProblems(problems, { ...base, target: 0 }).groups).toHaveLength(0);
  });

  it("with `all`, groups only identical tag sets; ignored tags do not count", () => {
    const same = [
      { id: "x", tags: ["Array", "Math"] },
      { id: "y", tags: ["Math", "Array"] },
      { id: "z", tags: ["Array"] },
    ];
    const all = groupSimilarProblems(same, { ...base, match: "all" });
    expect(all.groups.map((g) => [...g.members].sort())).toEqual([[0, 1]]);
    const ignored = groupSimilarProblems(same, { ...base, ignore: ["array"] });
    expect(ignored.groups.map((g) => [...g.members].sort())).toEqual([[0, 1]]);
    expect(ignored.untagged).toBe(1);
    expect(
      groupSimilarProblems(same, { ...base, minShared: 2 }).groups.map((g) => [...g.members].sort()),
    ).toEqual([[0, 1]]);
  });

  it("draws sizes 4:1 by default for [2, 3], about 2.2 problems per group", () => {
    const many = Array.from({ length: 2000 }, (_, i) => ({ id: String(i), tags: ["Array"] }));
    const result = groupSimilarProblems(many, { ...base, sizes: [2, 3], target: 500 });
    const mean = result.groups.reduce((n, g) => n + g.members.length, 0) / result.groups.length;
    expect(mean).toBeGreaterThan(2.1);
    expect(mean).toBeLessThan(2.3);
  });
});
