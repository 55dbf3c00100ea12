// Seeded randomness: every draw the pipeline makes comes from a seed in the config, so the same
// config gives the same release on every machine. Math.random is for jitter only (backoffs).

/**
 * Floats in [0, 1) from a seed (mulberry32): small, fast and the same on every platform. Packing,
 * grouping and the follow-up plans draw from it; changing it changes their releases.
 */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Murmur3's finalizer: every input bit affects every output bit (not cryptographic, only well mixed). */
export function mix32(x: number): number {
  let h = x | 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Whole 32-bit values from a seed (splitmix32), for hash parameters such as MinHash's. */
export function seededUint32(seed: number): () => number {
  let s = seed | 0;
  return () => {
    s = (s + 0x9e3779b9) | 0;
    return mix32(s);
  };
}

/** Fisher-Yates from the last position down, drawing from `random`: shuffles `items` and returns it. */
export function shuffleInPlace<T>(items: T[], random: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}
