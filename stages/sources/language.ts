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

export function seedLanguage(answer: string, declared?: string): LanguageName | typeof UNKNOWN_LANGUAGE {
  const fromDataset = canonicalLanguage(declared);
  if (fromDataset) return fromDataset;
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
