import { describe, expect, it } from "vitest";
import { computeMetrics } from "../../pipeline/eval/metrics.js";
import { ProgressBar, summaryTable } from "../../pipeline/eval/report.js";
import type { Outcome, PredictionResult } from "../../pipeline/eval/types.js";
import { predictionResult } from "../fixtures/eval/results.js";

function result(qid: string, language: string, outcome: Outcome): PredictionResult {
  return predictionResult({
    qid,
    id: `${qid}-${outcome}`,
    language: language as PredictionResult["language"],
    outcome,
    num_passed: outcome === "Passed" ? 1 : 0,
  });
}

/** A stream that keeps what is written, a TTY or not. */
function sink(isTTY: boolean) {
  const chunks: string[] = [];
  const out = { isTTY, write: (chunk: string) => chunks.push(chunk) > 0 } as unknown as NodeJS.WriteStream;
  return { out, chunks };
}

describe("progress bar", () => {
  it("redraws one line on a terminal and ends it when done", () => {
    const { out, chunks } = sink(true);
    const bar = new ProgressBar(0, out);
    bar.start(2);
    bar.tick(result("a", "python", "Passed"));
    bar.tick(result("b", "python", "Timed Out"));
    expect(chunks).toEqual([
      `\r[${"#".repeat(15)}${".".repeat(15)}] evaluating 1/2 (1 passed)`,
      `\r[${"#".repeat(30)}] evaluating 2/2 (1 passed)`,
      "\n",
    ]);
  });

  it("writes a line per tenth of the way elsewhere (logs, CI)", () => {
    const { out, chunks } = sink(false);
    const bar = new ProgressBar(20, out);
    for (let i = 0; i < 20; i++)
      bar.tick(result(String(i), "python", i % 2 === 0 ? "Passed" : "Failed Tests"));
    expect(chunks).toHaveLength(11);
    expect(chunks[0]).toBe("evaluating 1/20 (1 passed)\n");
    expect(chunks.at(-1)).toBe("evaluating 20/20 (10 passed)\n");
  });
});

describe("summary table", () => {
  it("has a row per language, then the overall row, with outcome counts and pass@k", () => {
    const metrics = computeMetrics(
      [
        result("q1", "python", "Passed"),
        result("q1", "python", "Failed Tests"),
        result("q2", "python", "Had Runtime Error"),
        result("q1", "go", "Had Error"),
      ],
      [2, 1],
    );
    expect(summaryTable(metrics)).toEqual({
      header: [
        "language",
        "questions",
        "predictions",
        "Passed",
        "Failed Tests",
        "Had Error",
        "Had Runtime Error",
        "Timed Out",
        "pass@1",
        "pass@2",
      ],
      rows: [
        ["go", "1", "1", "0", "0", "1", "0", "0", "0.0%", "-"],
        // python q1: n=2 c=1 (pass@1 1/2, pass@2 1); q2: n=1 c=0 (pass@1 0, no pass@2).
        ["python", "2", "3", "1", "1", "0", "1", "0", "25.0%", "100.0%"],
        ["overall", "3", "4", "1", "1", "1", "1", "0", "16.7%", "100.0%"],
      ],
    });
  });
});
