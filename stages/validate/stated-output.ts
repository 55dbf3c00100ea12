// What an answer says its code prints: an "Output:" block after the code, or a phrase such as
// "it prints `6`". Validate compares it with what the sandbox printed; a model that describes output
// its code does not produce teaches the reader to trust a run that never happened.

export interface StatedOutput {
  /** what the answer claims, as written */
  text: string;
  /** a whole output block must match; a phrase must appear in the output */
  whole: boolean;
}

// "Output:", "**Output:**", "Expected output:", "This will output:", "The output is:" and a fence
const OUTPUT_BLOCK =
  /(?:^|\n)[^\n]*?\b(?:output|prints?|printed)\b(?: will be| would be| is)?\s*[*_]*:[*_]*\s*\n+```(?:text|txt|plaintext|plain|output|out|console)?[ \t]*\n([\s\S]*?)\n```/gi;
// "Output: 42" on its own line
const OUTPUT_LINE = /(?:^|\n)\s*[*_]*(?:expected\s+)?output[*_]*\s*:[*_]*[ \t]+`?([^`\n]+?)`?\s*(?=\n|$)/gi;
// "it prints `6`", "this will output `[1, 2]`", "which displays `Hello`"
const OUTPUT_PHRASE =
  /\b(?:it|this|that|which|code|program|script|will|would|should)\s+(?:(?:will|would|should)\s+)?(?:print|output|display|show)s?\s*(?:out\s*)?:?\s*`([^`\n]+)`/gi;

/** The outputs an answer states, in order. */
export function statedOutputs(answer: string): StatedOutput[] {
  const found: StatedOutput[] = [];
  for (const m of answer.matchAll(OUTPUT_BLOCK)) found.push({ text: m[1] ?? "", whole: true });
  for (const m of answer.matchAll(OUTPUT_LINE)) found.push({ text: m[1] ?? "", whole: false });
  for (const m of answer.matchAll(OUTPUT_PHRASE)) found.push({ text: m[1] ?? "", whole: false });
  return found.filter((s) => s.text.trim() !== "");
}

const normalize = (s: string) =>
  s
    .replace(/\r\n?/g, "\n")
    .split("\n")
    .map((line) => line.trimEnd())
    .join("\n")
    .replace(/^\n+|\n+$/g, "");

/** Whether a stated output agrees with what the code printed; an elided statement ("...") always does. */
export function agrees(stated: StatedOutput, printed: string): boolean {
  if (/\.\.\.|…/.test(stated.text)) return true;
  const claim = normalize(stated.text);
  const actual = normalize(printed);
  if (stated.whole) return claim === actual;
  // a phrase quotes a value: its words must be in the output, quotes around a string aside
  const bare = claim.replace(/^(["'])(.*)\1$/, "$2").trim();
  return actual.includes(claim.trim()) || actual.includes(bare);
}
