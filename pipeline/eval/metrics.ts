// Aggregates prediction results into BabelCode-style metrics: outcome counts, pass@k (mean over
// questions of the unbiased estimator) and test-level counts, overall and per language, plus the
// per-question counts. A "question" here is a (language, qid) pair: each language is its own task.
import { meanPassAtK, type PassAtKSummary } from "./pass-at-k.js";
import { OUTCOMES, type Outcome, type PredictionResult } from "./types.js";

export interface QuestionCounts {
  qid: string;
  language: string;
  /** predictions evaluated */
  n: number;
  /** predictions that passed */
  c: number;
  outcomes: Record<Outcome, number>;
  /** per test id: how many predictions got each result (PASSED, FAILED, MISSING, exception names) */
  test_results: Record<string, Record<string, number>>;
}

export interface GroupMetrics {
  predictions: number;
  questions: number;
  outcomes: Record<Outcome, number>;
  /** "pass@1" -> mean over questions with n >= k */
  pass_at_k: Record<string, PassAtKSummary>;
  tests: { total: number; passed: number };
}

export interface EvalMetrics {
  ks: number[];
  overall: GroupMetrics;
  by_language: Record<string, GroupMetrics>;
  questions: QuestionCounts[];
}

function emptyOutcomes(): Record<Outcome, number> {
  return Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
}

function groupMetrics(
  questions: readonly QuestionCounts[],
  results: readonly PredictionResult[],
  ks: number[],
) {
  const outcomes = emptyOutcomes();
  let total = 0;
  let passed = 0;
  for (const result of results) {
    outcomes[result.outcome]++;
    total += result.num_tests;
    passed += result.num_passed;
  }
  const group: GroupMetrics = {
    predictions: results.length,
    questions: questions.length,
    outcomes,
    pass_at_k: {},
    tests: { total, passed },
  };
  for (const k of ks) group.pass_at_k[`pass@${k}`] = meanPassAtK(questions, k);
  return group;
}

/** Metrics for `results`, with pass@k for each k in `ks`. Deterministic: groups are sorted by name. */
export function computeMetrics(results: readonly PredictionResult[], ks: readonly number[]): EvalMetrics {
  const sortedKs = [...new Set(ks)].sort((a, b) => a - b);
  const byQuestion = new Map<string, QuestionCounts>();
  for (const result of results) {
    const key = `${result.language}\u0000${result.qid}`;
    let counts = byQuestion.get(key);
    if (!counts) {
      counts = {
        qid: result.qid,
        language: result.language,
        n: 0,
        c: 0,
        outcomes: emptyOutcomes(),
        test_results: {},
      };
      byQuestion.set(key, counts);
    }
    counts.n++;
    if (result.outcome === "Passed") counts.c++;
    counts.outcomes[result.outcome]++;
    for (const [id, testResult] of Object.entries(result.test_results)) {
      const perTest = counts.test_results[id] ?? {};
      perTest[testResult] = (perTest[testResult] ?? 0) + 1;
      counts.test_results[id] = perTest;
    }
  }
  const questions = [...byQuestion.values()].sort(
    (a, b) => a.language.localeCompare(b.language) || compareIds(a.qid, b.qid),
  );
  const languages = [...new Set(questions.map((q) => q.language))].sort();
  const by_language: Record<string, GroupMetrics> = {};
  for (const language of languages) {
    by_language[language] = groupMetrics(
      questions.filter((q) => q.language === language),
      results.filter((r) => r.language === language),
      sortedKs,
    );
  }
  return { ks: sortedKs, overall: groupMetrics(questions, results, sortedKs), by_language, questions };
}

/** Numeric ids in numeric order ("2" before "10"), others as text. */
export function compareIds(a: string, b: string): number {
  const na = Number(a);
  const nb = Number(b);
  if (a.trim() !== "" && b.trim() !== "" && Number.isFinite(na) && Number.isFinite(nb) && na !== nb)
    return na - nb;
  return a.localeCompare(b);
}
