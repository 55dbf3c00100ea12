// The packing rule on its own: every query in at most one dialogue, 2 or 3 neighbours joining it,
// bypasses counted, and the same seed giving the same dialogues.
import { describe, expect, it } from "vitest";
import type { Neighbour } from "../../pipeline/embed/index.js";
import { packSimilarQueries } from "../../stages/pack/packing.js";

/** Points on a line: a query's neighbours are the nearest positions on either side. */
function lineNeighbours(count: number, k: number) {
  return (i: number): Neighbour[] =>
    Array.from({ length: count }, (_, j) => ({ index: j, distance: Math.abs(i - j) / count }))
      .filter((n) => n.index !== i)
      .sort((a, b) => a.distance - b.distance || a.index - b.index)
      .slice(0, k);
}

describe("packSimilarQueries", () => {
  const count = 500;
  const neighboursOf = lineNeighbours(count, 4);

  it("uses each query at most once and joins 2 or 3 of its unused nearest neighbours", () => {
    const result = packSimilarQueries({ count, neighboursOf, joinSizes: [2, 3], seed: 1 });
    const seen = new Set<number>();
    const sizes = new Set<number>();
    for (const g of result.groups) {
      const members = [g.seed, ...g.joined.map((n) => n.index)];
      for (const m of members) {
        expect(seen.has(m)).toBe(false);
        seen.add(m);
      }
      sizes.add(g.joined.length);
      const nearest = new Set(neighboursOf(g.seed).map((n) => n.index));
      for (const [k, n] of g.neighbours.entries()) {
        // a neighbour that joined was free when the seed was visited
        if (g.joined.some((j) => j.index === n.index)) expect(g.usedBefore[k]).toBe(false);
      }
      for (const j of g.joined) expect(nearest.has(j.index)).toBe(true);
      for (let k = 1; k < g.joined.length; k++)
        expect(g.joined[k]!.distance).toBeGreaterThanOrEqual(g.joined[k - 1]!.distance);
    }
    expect([...sizes].sort()).toEqual([2, 3]);
    expect(seen.size + result.single).toBe(count);
    expect(result.bypassed).toBeGreaterThan(0);
    expect(result.single).toBeGreaterThan(0);
  });

  it("is deterministic for a seed and changes with it", () => {
    const a = packSimilarQueries({ count, neighboursOf, joinSizes: [2, 3], seed: 9 });
    const b = packSimilarQueries({ count, neighboursOf, joinSizes: [2, 3], seed: 9 });
    const c = packSimilarQueries({ count, neighboursOf, joinSizes: [2, 3], seed: 10 });
    expect(b).toEqual(a);
    expect(c.groups).not.toEqual(a.groups);
  });

  it("bypasses a query whose unused neighbours are too few", () => {
    // 0, 1, 2 are each other's only neighbours; whoever is visited first takes the other two
    const neighbours: Record<number, Neighbour[]> = {
      0: [
        { index: 1, distance: 0.1 },
        { index: 2, distance: 0.2 },
      ],
      1: [
        { index: 0, distance: 0.1 },
        { index: 2, distance: 0.1 },
      ],
      2: [
        { index: 1, distance: 0.1 },
        { index: 0, distance: 0.2 },
      ],
      3: [{ index: 0, distance: 0.5 }],
    };
    const result = packSimilarQueries({
      count: 4,
      neighboursOf: (i) => neighbours[i]!,
      joinSizes: [2, 3],
      seed: 3,
    });
    expect(result.groups).toHaveLength(1);
    expect(result.groups[0]!.joined).toHaveLength(2);
    expect(result.bypassed).toBe(1); // query 3: one neighbour, and only 2 or 3 may join
    expect(result.single).toBe(1);
  });
});
