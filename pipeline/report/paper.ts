// The paper's own figures that the report sets our run beside (OpenCodeInterpreter, arXiv 2402.14658).
// Per-method dialogue figures live with the dialogue record (PAPER_DIALOGUE_STATS in pipeline/dialogue.ts).

/** The filtering figure: the aggregated pool, after the first complexity round, after the second. */
export const PAPER_FILTER = { pool: 287_252, round1: 191_122, kept: 156_526 } as const;

/** Languages of the filtered set (CodeFeedback-Filtered-Instruction), percent of its queries. */
export const PAPER_LANGUAGES: Readonly<Record<string, number>> = {
  python: 67.07,
  javascript: 5.82,
  java: 4.94,
  sql: 4.69,
  cpp: 2.98,
  other: 14.5,
};
