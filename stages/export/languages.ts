// The languages of the filtered set beside the paper's (OpenCodeInterpreter, arXiv 2402.14658), for
// export's summary, card and report section (counted from filter's summary or export's released pairs).
import { z } from "zod";
import { PAPER_DEVIATION_LIMIT, paperDeviation } from "../../pipeline/dialogue.js";

/** Languages of the filtered set (CodeFeedback-Filtered-Instruction), percent of its queries. */
export const PAPER_LANGUAGES: Readonly<Record<string, number>> = {
  python: 67.07,
  javascript: 5.82,
  java: 4.94,
  sql: 4.69,
  cpp: 2.98,
  other: 14.5,
};

/** One language's share of a set beside the paper's, marked when it is more than 20% off. */
export const languageShareSchema = z.object({
  lang: z.string(),
  count: z.number(),
  percent: z.number(),
  paper: z.number(),
  /** relative to the paper's percent */
  deviation: z.number(),
  deviates: z.boolean(),
});
export type LanguageShare = z.infer<typeof languageShareSchema>;

/**
 * A language count set beside PAPER_LANGUAGES: the paper's named languages in its order, then `other`
 * (every language it does not name, `unknown` included). Undefined when there is nothing to compare.
 */
export function compareLanguages(
  counts: Readonly<Record<string, number>>,
): { total: number; rows: LanguageShare[]; other: Record<string, number> } | undefined {
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  if (total === 0) return undefined;
  const named = Object.keys(PAPER_LANGUAGES).filter((l) => l !== "other");
  const other: Record<string, number> = {};
  for (const [lang, n] of Object.entries(counts)) if (!named.includes(lang) && n > 0) other[lang] = n;
  const rows = [...named, "other"].map((lang): LanguageShare => {
    const count = lang === "other" ? Object.values(other).reduce((a, b) => a + b, 0) : (counts[lang] ?? 0);
    const percent = (100 * count) / total;
    const paper = PAPER_LANGUAGES[lang] ?? 0;
    const deviation = paperDeviation(percent, paper);
    return { lang, count, percent, paper, deviation, deviates: Math.abs(deviation) > PAPER_DEVIATION_LIMIT };
  });
  return { total, rows, other };
}
