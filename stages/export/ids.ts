// The integer ids of the release. m-a-p/Code-Feedback numbers its rows (`"id": 1`), so ours are integers
// too; each is derived from the dialogue's stable string id alone (the first 52 bits of its SHA-256),
// not from its rank, so a rerun gives every dialogue the same number even when other dialogues came or
// went, and the numbers stay clear of the public set's 1..66K when the two are concatenated. 52 bits
// is exact in a JSON number, a JavaScript number and a Parquet INT64.
import { createHash } from "node:crypto";

const SPACE = 2 ** 52;

/** The id a string id asks for, before any collision is resolved. */
export function preferredId(stringId: string): number {
  return Number.parseInt(createHash("sha256").update(stringId).digest("hex").slice(0, 13), 16);
}

/**
 * An integer for each string id, unique within the set. Two string ids whose hashes collide (odds about
 * n²/2⁵³: one in two million at 100K dialogues) are resolved in sorted order of the string ids, the
 * later one taking the next free number, so the outcome depends only on the set of ids.
 */
export function releaseIds(
  stringIds: Iterable<string>,
  preferred: (stringId: string) => number = preferredId,
): Map<string, number> {
  const sorted = [...new Set(stringIds)].sort();
  const taken = new Set<number>();
  const ids = new Map<string, number>();
  for (const s of sorted) {
    let id = preferred(s);
    while (taken.has(id)) id = (id + 1) % SPACE;
    taken.add(id);
    ids.set(s, id);
  }
  return ids;
}
