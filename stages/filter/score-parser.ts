// Reading a complexity score out of a model's answer: "4", "Score: 4", "**4 Points** - Difficult",
// "Rating: 5/5", "评分：4分"... The first score said as a score (a label, a verb of rating, "N
// points", "N/5", a leading number) counts; the parser refuses rather than guesses ("between 3 and
// 4", "4.5", "8/10", none at all), so the model is asked once more instead of being given any score.

export interface ParsedScore {
  score: number;
  /** which form it was said in, for tests and debugging */
  form: "label" | "verb" | "points" | "fraction" | "leading" | "criterion" | "named";
}

/** Criterion labels of a scoring prompt ("4 Points - Difficult: ..." -> difficult = 4). */
export function criterionLabels(promptText: string): Map<string, number> {
  const labels = new Map<string, number>();
  for (const m of promptText.matchAll(/^\s*([1-5])\s+Points?\s*-\s*([^:\n]+?)\s*:/gim)) {
    labels.set(m[2]!.toLowerCase(), Number(m[1]));
  }
  return labels;
}

// A score digit: one digit 1-5, not part of a longer number or a decimal ("10", "4.5").
const DIGIT = String.raw`(?<![\d.])([1-5])(?!\d|[.,]\d)`;
// An optional "out of" part; anything but 5 there means another scale.
const OUT_OF = String.raw`(?:\s*(?:\/|out\s+of)\s*(\d+))?`;
// A second score right after the first: "3-4", "3 or 4", "3 to 4", "3 and 4", "3/4".
const AMBIGUOUS_TAIL = /^\s*(?:-|–|—|~|or|to|and|\/)\s*(?:a\s+)?[1-5](?!\d|[.,]\d|\s*(?:out\s+of|\/)\s*5)/i;

interface Form {
  form: ParsedScore["form"];
  pattern: RegExp;
}

const FORMS: Form[] = [
  {
    // "Score: 4", "Rating: 5/5", "a score of 4", "the rating is 3", "评分：4分", "Complexity score = 4"
    form: "label",
    pattern: new RegExp(
      String.raw`(?:\bscore[sd]?\b|\bscoring\s*[:=]|\brating\b|\bgrade\b|评分|分数|得分|打分)[^\d\n]{0,30}?${DIGIT}${OUT_OF}`,
      "gid",
    ),
  },
  {
    // "I would rate this query a 4", "I'd give it a 4", "rated as 3", "assign it 5 points"
    form: "verb",
    pattern: new RegExp(
      // (not "I would not rate it 5, rather 4": a negated rating is no score)
      String.raw`(?<!\bnot\s+|n't\s+|\bnever\s+)\b(?:rate|rated|give|gave|assign|assigned)\b[^\d\n]{0,40}?${DIGIT}${OUT_OF}`,
      "gid",
    ),
  },
  {
    // "Complexity: 4", "Difficulty level: 5", "complexity is 3", "the complexity of this query is 4"
    form: "label",
    pattern: new RegExp(
      String.raw`\b(?:complexity|difficulty)(?:\s+(?:level|rating))?(?:\s+of\s+(?:this|the)\s+(?:query|task|problem|question))?\s*(?::|=|is|of|would\s+be)\s*(?:a\s+|level\s+)?${DIGIT}${OUT_OF}`,
      "gid",
    ),
  },
  {
    // "4 Points", "**4 Points** - Difficult", "4 pts", "4分"
    form: "points",
    pattern: new RegExp(String.raw`${DIGIT}\s*(?:points?\b|pts?\b|分)()`, "gid"),
  },
  {
    // "4/5", "4 out of 5"
    form: "fraction",
    pattern: new RegExp(String.raw`${DIGIT}\s*(?:\/|out\s+of)\s*(\d+)`, "gid"),
  },
];

const SCALE_MENTION =
  /(?:\bon\s+)?(?:\ba\s+)?\bscale\s+(?:of\s+|from\s+)?1\s*(?:-|–|to)\s*5\b|\bfrom\s+1\s+to\s+5\b|\(1\s*-\s*5\)|\b1\s*(?:-|–|to)\s*5\s+scale\b/gi;
const CRITERION_LINE = /^\s*(?:[-*•]\s*)?[1-5]\s*points?\s*[-–—:]/i;
const LABEL_OVER_SCORE =
  /\b((?:complexity\s+|difficulty\s+)?(?:score|rating|grade|complexity|difficulty))([ \t]*[:=]?)[ \t]*(?:\r?\n[ \t]*)+(?=[1-5](?![\d,]|\.\d|[.)][ \t]+\S))/gi;

/** Strips what hides the score without changing where it is: Markdown, full-width digits, restated scales. */
function normalize(answer: string): string {
  let text = answer
    .replace(/[０-９]/g, (d) => String.fromCharCode(d.charCodeAt(0) - 0xff10 + 48))
    .replace(/[：]/g, ":")
    .replace(/[*_`#>]+/g, "")
    .replace(SCALE_MENTION, " ")
    // "Score: 4.0" is a 4 ("4.5" stays a refusal)
    .replace(/(?<![\d.])([1-5])\.0+(?![\d.])/g, "$1")
    // "Score:\n4", a "Score" heading over its number: the label and its score on one line (not
    // "Difficulty\n1. Parse the input": a numbered list under a heading)
    .replace(LABEL_OVER_SCORE, "$1$2 ");
  // An answer that repeats the criteria list ("1 Point - Very Basic: ..." x5) would otherwise score 1.
  const lines = text.split("\n");
  if (lines.length >= 3 && lines.filter((l) => CRITERION_LINE.test(l)).length >= 3) {
    text = lines.filter((l) => !CRITERION_LINE.test(l)).join("\n");
  }
  return text.trim();
}

interface Candidate {
  at: number;
  score: number;
  form: ParsedScore["form"];
  ambiguous: boolean;
}

function firstOf(text: string, form: Form): Candidate | undefined {
  form.pattern.lastIndex = 0;
  for (const m of text.matchAll(form.pattern)) {
    const denominator = m[2];
    // "8/10", "3 out of 4": a score on another scale is not ours; keep looking.
    if (denominator && denominator !== "5") continue;
    const digitAt = m.indices![1]![0];
    const end = (m.index ?? 0) + m[0].length;
    return {
      at: digitAt,
      score: Number(m[1]),
      form: form.form,
      ambiguous: AMBIGUOUS_TAIL.test(text.slice(denominator ? end : digitAt + 1)),
    };
  }
  return undefined;
}

function leading(text: string): Candidate | undefined {
  // "4", "4.", "4 -", "(4)", "[4]", "4: Difficult"
  const m = /^[[(]?\s*([1-5])(?!\d|[.,]\d)\s*(?:[\])]|[.:,;-]|–|—|\s|$)/.exec(text);
  if (!m) return undefined;
  // "1. Score: 4\n2. Explanation: ..." is a numbered list, not a score of 1.
  if (m[1] === "1" && /^\s*1[.)]/.test(text) && /\n\s*2[.)]\s/.test(text)) return undefined;
  return {
    at: 0,
    score: Number(m[1]),
    form: "leading",
    ambiguous: AMBIGUOUS_TAIL.test(text.slice(m[0].indexOf(m[1]!) + 1)),
  };
}

const namedPatterns = new WeakMap<Map<string, number>, RegExp>();

/** "this would be a 4 (Difficult)": a digit followed by the prompt's name for that same score. */
function named(text: string, labels: Map<string, number>): Candidate | undefined {
  if (labels.size === 0) return undefined;
  let pattern = namedPatterns.get(labels);
  if (!pattern) {
    // Longest first: "very difficult" before "difficult".
    const names = [...labels.keys()].sort((a, b) => b.length - a.length);
    const alternatives = names.map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|");
    pattern = new RegExp(String.raw`${DIGIT}\s*(?:\(|-|–|—|:|,)?\s*(${alternatives})\b`, "gid");
    namedPatterns.set(labels, pattern);
  }
  for (const m of text.matchAll(pattern)) {
    const score = Number(m[1]);
    // "4 (Very Basic)" says two different things: not a score.
    if (labels.get(m[2]!.toLowerCase()) !== score) continue;
    return { at: m.indices![1]![0], score, form: "named", ambiguous: false };
  }
  return undefined;
}

function criterion(text: string, labels: Map<string, number>): Candidate | undefined {
  const head = text.slice(0, 80).toLowerCase();
  // Longest first: "very difficult" before "difficult".
  const byLength = [...labels.keys()].sort((a, b) => b.length - a.length);
  for (const label of byLength) {
    if (head.startsWith(label) && !/^[a-z]/.test(head.slice(label.length))) {
      return { at: 0, score: labels.get(label)!, form: "criterion", ambiguous: false };
    }
  }
  return undefined;
}

/**
 * The score in an answer, or undefined when there is none or it is ambiguous. `labels` (from
 * `criterionLabels` of the prompt) let an answer that starts with a criterion's name count too.
 */
export function parseComplexityScore(
  answer: string,
  labels: Map<string, number> = new Map(),
): ParsedScore | undefined {
  const text = normalize(answer);
  if (!text) return undefined;
  const candidates: Candidate[] = [];
  // No other form can say a score earlier than one with no digit 1-5 before it: stop there (the
  // usual "4" or "Score: 4" is then read with one or two patterns instead of all of them).
  const settled = (c: Candidate) => !/[1-5]/.test(text.slice(0, c.at));
  const lead = leading(text);
  if (lead) {
    // "3 nested loops are needed ... Score: 2": a bare leading number that a labelled score later
    // contradicts is not trusted either way.
    const labelled = firstOf(text, FORMS[0]!);
    if (labelled && !labelled.ambiguous && labelled.score !== lead.score) return undefined;
    candidates.push(lead);
  }
  for (const form of FORMS) {
    if (candidates.length === 1 && settled(candidates[0]!)) break;
    const found = firstOf(text, form);
    if (found) candidates.push(found);
  }
  if (!(candidates.length === 1 && settled(candidates[0]!))) {
    const found = named(text, labels);
    if (found) candidates.push(found);
  }
  if (candidates.length === 0) {
    const named = criterion(text, labels);
    return named ? { score: named.score, form: named.form } : undefined;
  }
  // The earliest score said as a score wins: the prompt asks for the score first.
  candidates.sort((a, b) => a.at - b.at);
  const first = candidates[0]!;
  if (first.ambiguous) return undefined;
  return { score: first.score, form: first.form };
}
