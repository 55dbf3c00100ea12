// The text dedup and decontamination compare: case, Unicode compatibility forms, punctuation and runs
// of whitespace do not make two queries different.

const ASCII_ONLY = /^[\x00-\x7f]*$/;

function isSpace(code: number): boolean {
  return (
    code === 0x20 ||
    (code >= 0x09 && code <= 0x0d) ||
    code === 0xa0 ||
    code === 0x3000 ||
    (code >= 0x2000 && code <= 0x200a)
  );
}

/**
 * A 52-bit key of the text in NFKC, lowercased, with whitespace runs folded to one space and none at
 * either end (two queries equal so are exact duplicates), computed in one pass without building that
 * string: two independent 32-bit FNV-1a hashes. Two different queries share a key with odds of about 1 in 10^5 over 287k queries.
 */
export function exactKey(text: string): number {
  const folded = ASCII_ONLY.test(text) ? text : text.normalize("NFKC").toLowerCase();
  let a = 0x811c9dc5;
  let b = 0x050c5d1f;
  let pendingSpace = false;
  let started = false;
  for (let i = 0; i < folded.length; i++) {
    let code = folded.charCodeAt(i);
    if (isSpace(code)) {
      pendingSpace = started;
      continue;
    }
    if (pendingSpace) {
      a = Math.imul(a ^ 0x20, 0x01000193);
      b = Math.imul(b ^ 0x20, 0x01000193) ^ 0x5bd1e995;
      pendingSpace = false;
    }
    if (code >= 0x41 && code <= 0x5a) code += 0x20;
    a = Math.imul(a ^ code, 0x01000193);
    b = Math.imul(b ^ code, 0x01000193) ^ 0x5bd1e995;
    started = true;
  }
  return (a >>> 12) * 0x100000000 + (b >>> 0);
}

const WORD_CHAR = /[\p{L}\p{N}]/u;

/** For each ASCII code: the code lowercased if it is a word character (letter, digit, `_`), else 0. */
const ASCII_WORD = new Uint8Array(0x80).map((_, code) => {
  if (code >= 0x41 && code <= 0x5a) return code + 0x20;
  const word = (code >= 0x61 && code <= 0x7a) || (code >= 0x30 && code <= 0x39) || code === 0x5f;
  return word ? code : 0;
});

/** `ASCII_WORD` beyond ASCII: the character lowercased if it is a letter or digit, else 0. */
function wordCode(text: string, i: number): number {
  const char = text[i]!;
  return WORD_CHAR.test(char) ? char.toLowerCase().charCodeAt(0) : 0;
}

/** Where `wordHashes` collects the hashes: a text of n characters has at most n / 2 + 1 words. */
let collected = new Uint32Array(1 << 14);

/**
 * FNV-1a hashes of the text's words (runs of letters, digits and underscore), lowercased. Hashing as
 * it scans, without cutting the text into strings, is what makes dedup fast enough for 287k queries.
 * Hashes are 30-bit so they stay small integers (cheap Map keys) when used as such.
 */
export function wordHashes(text: string): Uint32Array {
  if (collected.length < (text.length >>> 1) + 1) collected = new Uint32Array((text.length >>> 1) + 1);
  const out = collected;
  let count = 0;
  let h = 0x811c9dc5;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const lower = code < 0x80 ? ASCII_WORD[code]! : wordCode(text, i);
    if (lower !== 0) {
      h = Math.imul(h ^ lower, 0x01000193);
      inWord = true;
    } else if (inWord) {
      out[count++] = (h >>> 0) & 0x3fffffff;
      h = 0x811c9dc5;
      inWord = false;
    }
  }
  if (inWord) out[count++] = (h >>> 0) & 0x3fffffff;
  return out.slice(0, count);
}

/**
 * Hashes of the runs of `k` consecutive words (one run of all words when there are fewer than k and
 * `allowShort`), 30-bit like the word hashes. `distinct`: sorted with repeats removed, for counting
 * shared n-grams; MinHash takes a minimum, which repeats cannot change, so it skips the sort.
 */
export function wordGrams(
  hashes: Uint32Array,
  k: number,
  options: { allowShort: boolean; distinct: boolean },
): Uint32Array {
  const n = hashes.length;
  if (n === 0 || (n < k && !options.allowShort)) return new Uint32Array(0);
  const count = Math.max(1, n - k + 1);
  const out = new Uint32Array(count);
  for (let s = 0; s < count; s++) out[s] = gramHash(hashes, s, k);
  if (!options.distinct) return out;
  out.sort();
  let unique = 0;
  for (let i = 0; i < count; i++) if (i === 0 || out[i] !== out[unique - 1]) out[unique++] = out[i]!;
  return out.subarray(0, unique);
}

/** The hash of the words from `start` to `start + k` (or to the end, when fewer are left). */
export function gramHash(hashes: Uint32Array, start: number, k: number): number {
  let h = 0x2545f491 ^ k;
  const end = Math.min(hashes.length, start + k);
  for (let i = start; i < end; i++) {
    h = Math.imul(h ^ hashes[i]!, 0x9e3779b1);
    h ^= h >>> 15;
  }
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return (h >>> 0) & 0x3fffffff;
}
