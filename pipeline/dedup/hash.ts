// Small, fast 32-bit hashes for shingles and buckets. Not cryptographic; only well mixed.

/** Murmur3's finalizer: every input bit affects every output bit. */
export function mix32(x: number): number {
  let h = x | 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Combines a running hash with one more value (order matters). */
export function combine(h: number, value: number): number {
  return mix32(Math.imul(h ^ value, 0x9e3779b1) + 0x7f4a7c15);
}
