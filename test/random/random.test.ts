// The seeded draws decide which queries pack together and which problems group: a change in them
// changes every release made with the same seed. These orders were taken from the code before the
// generator and the shuffle moved to pipeline/random.ts, and must never move.
import { describe, expect, it } from "vitest";
import { seededRandom, seededUint32, shuffleInPlace } from "../../pipeline/random.js";
import { groupSimilarProblems } from "../../stages/leetcode/grouping.js";
import { packSimilarQueries } from "../../stages/pack/packing.js";

const upTo = (n: number) => Array.from({ length: n }, (_, i) => i);

describe("the seeded generator", () => {
  it("draws the same floats in [0, 1) for a seed as it always has (mulberry32)", () => {
    const random = seededRandom(7);
    expect([random(), random(), random()]).toEqual([
      0.011704753153026104, 0.06195825757458806, 0.97690763277933,
    ]);
  });

  it("shuffles into the same order for a seed as it always has", () => {
    expect(shuffleInPlace(upTo(10), seededRandom(0))).toEqual([3, 8, 6, 4, 5, 9, 7, 1, 0, 2]);
    expect(shuffleInPlace(upTo(10), seededRandom(1))).toEqual([7, 8, 3, 2, 1, 5, 9, 4, 0, 6]);
    expect(shuffleInPlace(upTo(10), seededRandom(42))).toEqual([0, 7, 3, 5, 2, 1, 8, 9, 4, 6]);
    expect(shuffleInPlace(upTo(10), seededRandom(2024))).toEqual([9, 2, 0, 1, 7, 3, 4, 5, 6, 8]);
  });

  it("shuffles in place and returns the same array", () => {
    const items = upTo(5);
    expect(shuffleInPlace(items, seededRandom(3))).toBe(items);
    expect([...items].sort()).toEqual(upTo(5));
  });

  it("draws the same 32-bit values for a seed as the MinHash parameters always had (splitmix32)", () => {
    const next = seededUint32(1);
    expect([next(), next(), next()]).toEqual([2527132011, 314344336, 2535364964]);
  });
});

describe("the stages' seeded orders", () => {
  it("packs the same queries together for a seed", () => {
    const n = 8;
    const result = packSimilarQueries({
      count: n,
      neighboursOf: (p) => [1, 2, 3].map((d) => ({ index: (p + d) % n, distance: d / 10 })),
      joinSizes: [1, 2],
      seed: 5,
    });
    expect(result.groups.map((g) => [g.seed, g.joined.map((j) => j.index)])).toEqual([
      [4, [6]],
      [2, [3, 5]],
      [0, [1]],
    ]);
    expect([result.bypassed, result.single]).toEqual([1, 1]);
  });

  it("groups the same problems together for a seed", () => {
    const tags = [["a", "b"], ["a"], ["b", "c"], ["c"], ["a", "c"], ["b"], ["a", "b", "c"], ["c", "d"]];
    const problems = tags.map((t, i) => ({ id: `p${i}`, tags: t }));
    const result = groupSimilarProblems(problems, {
      match: "any",
      minShared: 1,
      ignore: [],
      sizes: [2, 3],
      target: 10,
      seed: 11,
    });
    expect(result).toEqual({
      groups: [
        { members: [7, 2], shared: ["c"] },
        { members: [0, 6], shared: ["a", "b"] },
        { members: [1, 4], shared: ["a"] },
      ],
      bypassed: 2,
      untagged: 0,
    });
  });
});
