import { describe, expect, it } from "vitest";
import { compareIds, computeMetrics } from "../../pipeline/eval/metrics.js";
import type { Outcome, PredictionResult } from "../../pipeline/eval/types.js";
import { predictionResult } from "../fixtures/eval/results.js";

function result(language: string, qid: string, id: string, outcome: Outcome, passed: number, total = 2) {
  const test_results: Record<string, string> = {};
  for (let i = 0; i < total; i++) test_results[String(i)] = i < passed ? "PASSED" : "FAILED";
  return predictionResult({
    qid,
    id,
    language: language as PredictionResult["language"],
    outcome,
    test_results,
    num_tests: total,
    num_passed: passed,
  });
}

describe("computeMetrics", () => {
  const results = [
    result("python", "10", "a", "Passed", 2),
    result("python", "10", "b", "Failed Tests", 1),
    result("python", "10", "c", "Had Runtime Error", 0),
    result("python", "2", "a", "Passed", 2),
    result("go", "2", "a", "Timed Out", 0),
    result("go", "2", "b", "Passed", 2),
  ];
  const metrics = computeMetrics(results, [2, 1]);

  it("counts outcomes and tests per language and overall", () => {
    expect(metrics.ks).toEqual([1, 2]);
    expect(metrics.by_language.python?.outcomes).toEqual({
      Passed: 2,
      "Failed Tests": 1,
      "Had Error": 0,
      "Had Runtime Error": 1,
      "Timed Out": 0,
    });
    expect(metrics.overall.tests).toEqual({ total: 12, passed: 7 });
    expect(metrics.overall.predictions).toBe(6);
    expect(metrics.overall.questions).toBe(3);
  });

  it("averages pass@k over (language, question) pairs with enough samples", () => {
    // python/10: n=3 c=1 -> pass@1 1/3, pass@2 2/3; python/2: n=1 c=1 -> pass@1 1; go/2: n=2 c=1 -> 1/2, 1
    expect(metrics.by_language.python?.pass_at_k["pass@1"]?.value).toBeCloseTo((1 / 3 + 1) / 2, 12);
    expect(metrics.by_language.python?.pass_at_k["pass@2"]).toEqual({
      value: expect.closeTo(2 / 3, 12),
      questions: 1,
    });
    expect(metrics.by_language.go?.pass_at_k["pass@2"]).toEqual({ value: 1, questions: 1 });
    expect(metrics.overall.pass_at_k["pass@1"]?.value).toBeCloseTo((1 / 3 + 1 + 1 / 2) / 3, 12);
    expect(metrics.overall.pass_at_k["pass@2"]).toEqual({
      value: expect.closeTo((2 / 3 + 1) / 2, 12),
      questions: 2,
    });
  });

  it("keeps per-question counts in a stable order", () => {
    expect(metrics.questions.map((q) => [q.language, q.qid, q.n, q.c])).toEqual([
      ["go", "2", 2, 1],
      ["python", "2", 1, 1],
      ["python", "10", 3, 1],
    ]);
    expect(metrics.questions[2]?.test_results).toEqual({
      "0": { PASSED: 2, FAILED: 1 },
      "1": { PASSED: 1, FAILED: 2 },
    });
  });
});

describe("compareIds", () => {
  it("orders numbers numerically and the rest as text", () => {
    expect(["10", "b", "2", "a"].sort(compareIds)).toEqual(["2", "10", "a", "b"]);
  });
});
