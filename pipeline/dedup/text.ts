// The text dedup and decontamination compare: case, Unicode compatibility forms and runs of
// whitespace do not make two queries different.

/** NFKC, lowercased, whitespace collapsed: two queries equal under this are exact duplicates. */
export function normalizeForExact(text: string): string {
  return text.normalize("NFKC").toLowerCase().replace(/\s+/g, " ").trim();
}

const WORD = /[\p{L}\p{N}_]+/gu;

/** Word tokens (letters, digits, underscore), lowercased: punctuation and layout do not count. */
export function words(text: string): string[] {
  return text.toLowerCase().match(WORD) ?? [];
}
