// The `lang` of a seed pair, in this order of trust: the language the dataset declares (OSS-Instruct's
// own field), else the dominant fence info string of the answer (the language with the most code
// under its tag), else the syntax heuristic on the answer's code, else `unknown`.
import {
  canonicalLanguage,
  detectLanguage,
  extractCodeBlocks,
  type LanguageName,
} from "../../pipeline/code/index.js";

export const UNKNOWN_LANGUAGE = "unknown";

const FENCE_LINE = /^[ \t]*(?:`{3,}|~{3,})[ \t]*([^`\n]*?)[ \t]*$/gm;

/**
 * Where to look for the next fence line at or after `from`: the start of the line holding the next
 * ``` or ~~~ (-1 when there is none). No line before it can be a fence, so the regex starts there
 * instead of trying every line of the prose and code in between: a third of the time.
 */
function nextFenceLine(text: string, from: number): number {
  const backticks = text.indexOf("```", from);
  const tildes = text.indexOf("~~~", from);
  const at = backticks === -1 ? tildes : tildes === -1 ? backticks : Math.min(backticks, tildes);
  if (at === -1) return -1;
  let start = at;
  while (start > from && text.charCodeAt(start - 1) !== 0x0a) start--;
  return start;
}

/**
 * The one language named by the answer's fence info strings, when every tagged fence names the same
 * one; undefined when none or several are named (the caller then weighs blocks by code length).
 * Most answers are in one language, and this saves extracting their blocks.
 */
function soleTaggedLanguage(answer: string): LanguageName | undefined {
  let sole: LanguageName | undefined;
  for (let from = nextFenceLine(answer, 0); from !== -1; from = nextFenceLine(answer, FENCE_LINE.lastIndex)) {
    FENCE_LINE.lastIndex = from;
    const match = FENCE_LINE.exec(answer);
    if (!match) break;
    const tag = match[1];
    if (!tag) continue;
    const language = canonicalLanguage(tag);
    if (!language) continue;
    if (sole !== undefined && sole !== language) return undefined;
    sole = language;
  }
  return sole;
}

export function seedLanguage(answer: string, declared?: string): LanguageName | typeof UNKNOWN_LANGUAGE {
  const fromDataset = canonicalLanguage(declared);
  if (fromDataset) return fromDataset;
  const sole = soleTaggedLanguage(answer);
  if (sole) return sole;
  const blocks = extractCodeBlocks(answer);
  const tagged = new Map<LanguageName, number>();
  const detected = new Map<LanguageName, number>();
  for (const block of blocks) {
    const byTag = block.fenced ? canonicalLanguage(block.tag) : undefined;
    if (byTag) tagged.set(byTag, (tagged.get(byTag) ?? 0) + block.code.length + 1);
    else if (block.lang) detected.set(block.lang, (detected.get(block.lang) ?? 0) + block.code.length + 1);
  }
  const dominant = heaviest(tagged) ?? heaviest(detected);
  if (dominant) return dominant;
  // an answer without any recognisable block may still be bare code
  return blocks.length === 0 ? (detectLanguage(answer) ?? UNKNOWN_LANGUAGE) : UNKNOWN_LANGUAGE;
}

/** The key with the largest weight; ties go to the name that sorts first, so the choice is stable. */
function heaviest(weights: Map<LanguageName, number>): LanguageName | undefined {
  let best: LanguageName | undefined;
  let bestWeight = -1;
  for (const [name, weight] of weights) {
    if (weight > bestWeight || (weight === bestWeight && best !== undefined && name < best)) {
      best = name;
      bestWeight = weight;
    }
  }
  return best;
}
