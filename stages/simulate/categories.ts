// The paper's ten kinds of simulated human feedback, in the order of its feedback prompt. The prompt
// asks the reviewer to pick the most relevant one, but its JSON has no field for it; so the category
// is the one the answer names (a `category` or `type` field, when a model adds one), else the one
// whose words the feedback uses most, else `unclassified`.

export const FEEDBACK_CATEGORIES = [
  "syntax-and-formatting",
  "efficiency",
  "functionality-enhancements",
  "code-clarity-and-documentation",
  "bug-identification",
  "security-improvements",
  "compatibility-and-testing",
  "resource-optimization",
  "scalability",
  "adherence-to-best-practices",
] as const;
export type FeedbackCategory = (typeof FEEDBACK_CATEGORIES)[number] | "unclassified";

const WORDS: Record<(typeof FEEDBACK_CATEGORIES)[number], RegExp> = {
  "syntax-and-formatting":
    /\b(syntax|format(?:ting|ted)?|indent(?:ation)?|pep ?8|consistent (?:style|naming)|readab(?:le|ility)|spacing|linter?)\b/gi,
  efficiency:
    /\b(efficien(?:t|cy|tly)|optimi[sz](?:e|ed|ation)|time complexity|faster|performance|o\(n(?:\^?2| log n)?\)|loops?)\b/gi,
  "functionality-enhancements":
    /\b(feature|enhance(?:ment)?s?|user[- ]friendly|functionality|allow (?:the )?user|option(?:al)?|input validation|interactive)\b/gi,
  "code-clarity-and-documentation":
    /\b(comments?|document(?:ation|ed)?|docstrings?|explain|clarity|clearer|understandab(?:le|ility))\b/gi,
  "bug-identification":
    /\b(bugs?|errors?|incorrect|wrong|fix|fails?|crash(?:es)?|exception|edge cases?|logic(?:al)?|(?:does not|doesn't|won't|cannot) (?:compile|run))\b/gi,
  "security-improvements":
    /\b(secur(?:e|ity)|vulnerab(?:le|ility|ilities)|sanitiz(?:e|ation)|injection|escape|passwords?|credentials?)\b/gi,
  "compatibility-and-testing":
    /\b(tests?|testing|test cases?|unit tests?|compatib(?:le|ility)|platforms?|environments?|versions?)\b/gi,
  "resource-optimization": /\b(memory|resources?|cpu|space complexity|footprint|allocat(?:e|ion))\b/gi,
  scalability:
    /\b(scal(?:e|able|ability)|larger (?:data ?sets?|inputs?)|large (?:data ?sets?|inputs?)|more users)\b/gi,
  "adherence-to-best-practices":
    /\b(best practices?|idiomatic|conventions?|standards?|pythonic|recommended)\b/gi,
};

const slug = (s: string) =>
  s
    .toLowerCase()
    .replace(/\*|\d+\.\s*/g, "")
    .replace(/[^a-z]+/g, "-")
    .replace(/^-|-$/g, "");

/** The category an answer names itself: a number 1-10 or a name as the prompt writes it. */
export function namedCategory(value: unknown): (typeof FEEDBACK_CATEGORIES)[number] | undefined {
  if (typeof value === "number" && Number.isInteger(value)) return FEEDBACK_CATEGORIES[value - 1];
  if (typeof value !== "string") return undefined;
  const number = /^\s*(\d{1,2})\b/.exec(value);
  if (number) return FEEDBACK_CATEGORIES[Number(number[1]) - 1];
  const s = slug(value);
  return FEEDBACK_CATEGORIES.find((c) => c === s || c.startsWith(s) || s.startsWith(c));
}

/** The category whose words the texts use most; ties go to the one listed first in the prompt. */
export function categoryOfText(...texts: string[]): FeedbackCategory {
  const text = texts.join("\n");
  let best: FeedbackCategory = "unclassified";
  let bestHits = 0;
  for (const category of FEEDBACK_CATEGORIES) {
    const hits = text.match(WORDS[category])?.length ?? 0;
    if (hits > bestHits) {
      best = category;
      bestHits = hits;
    }
  }
  return best;
}
