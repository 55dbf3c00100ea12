// The paper's packing rule, on positions: visit the queries in a seeded random order; skip one already
// used; of its nearest neighbours not yet used, if enough are left, choose a join size ([1] by
// default, [2, 3] in the paper's text) and that many at random to follow it (nearest first); else
// bypass it (it may still join a later query's dialogue). Every query ends in at most one dialogue.
// Pure: the same neighbours and seed give the same dialogues.
import type { Neighbour } from "../../pipeline/embed/index.js";
import { seededRandom, shuffleInPlace } from "../../pipeline/random.js";

export interface PackedGroup {
  /** the query the dialogue was built around (its first turn) */
  seed: number;
  /** the joined neighbours, nearest first (turns 2, 3, ...) */
  joined: Neighbour[];
  /** every neighbour the seed query had, used or not, nearest first */
  neighbours: Neighbour[];
  /** which of `neighbours` were already used when the seed was visited */
  usedBefore: boolean[];
}

export interface PackResult {
  groups: PackedGroup[];
  /** queries visited whose unused neighbours were too few (some of them joined a later dialogue) */
  bypassed: number;
  /** queries in no dialogue at the end */
  single: number;
}

export function packSimilarQueries(options: {
  count: number;
  neighboursOf: (position: number) => Neighbour[];
  /** how many neighbours may join a query, e.g. [1] or [2, 3] */
  joinSizes: readonly number[];
  seed: number;
}): PackResult {
  const random = seededRandom(options.seed);
  const sizes = [...new Set(options.joinSizes)].sort((a, b) => a - b);
  const used = new Uint8Array(options.count);
  const order = shuffleInPlace(
    Array.from({ length: options.count }, (_, i) => i),
    random,
  );
  const groups: PackedGroup[] = [];
  let bypassed = 0;
  for (const position of order) {
    if (used[position]) continue;
    const neighbours = options.neighboursOf(position);
    const usedBefore = neighbours.map((n) => used[n.index] === 1);
    const free = neighbours.filter((_, i) => !usedBefore[i]);
    const possible = sizes.filter((s) => s <= free.length);
    if (possible.length === 0) {
      bypassed++;
      continue;
    }
    const size = possible[Math.floor(random() * possible.length)]!;
    const joined = shuffleInPlace([...free], random)
      .slice(0, size)
      .sort((a, b) => a.distance - b.distance || a.index - b.index);
    used[position] = 1;
    for (const n of joined) used[n.index] = 1;
    groups.push({ seed: position, joined, neighbours, usedBefore });
  }
  let single = 0;
  for (const u of used) if (!u) single++;
  return { groups, bypassed, single };
}
