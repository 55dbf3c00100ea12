// Runs the hand-written predictions through the real sandbox, every one in the program generated for
// its question, and checks each outcome and the metrics exactly.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EvaluationRun, evaluatePredictions } from "../../pipeline/eval/evaluate.js";
import { generateTestDir, readTestDir } from "../../pipeline/eval/generate.js";
import { harnessLanguages } from "../../pipeline/eval/harness/index.js";
import { computeMetrics, type EvalMetrics } from "../../pipeline/eval/metrics.js";
import { parsePredictions } from "../../pipeline/eval/predictions.js";
import { createCodeRunner, sandboxConfigSchema } from "../../pipeline/sandbox/index.js";
import type { CodeRunner } from "../../pipeline/sandbox/types.js";
import { ALL_PREDICTIONS } from "../fixtures/eval/predictions.js";
import { tempDir } from "../support/temp-dir.js";

const QUESTIONS = join(import.meta.dirname, "../fixtures/eval/questions.jsonl");

describe("evaluation through the sandbox (BabelCode questions, fifteen languages)", () => {
  let dir: string;
  let runner: CodeRunner;
  let run: EvaluationRun;
  let metrics: EvalMetrics;

  beforeAll(async () => {
    dir = tempDir("eval-e2e-");
    const generation = await generateTestDir(QUESTIONS, dir);
    // Every language the sandbox runs gets a program or a reason; bash, SQL, Racket and Verilog have none to give.
    const reasons = new Map(generation.failures.map((f) => [`${f.language}/${f.qid}`, f.reason]));
    expect(reasons.get("r/group_by_length")).toBe(
      "R list names are strings; a map with integer keys cannot be written",
    );
    const questions = generation.questions.map((q) => q.questionId);
    const containers = [
      "fingerprint",
      "group_by_length",
      "distinct_letters",
      "mean",
      "transpose",
      "char_counts",
    ];
    for (const qid of containers) expect(reasons.get(`c/${qid}`)).toMatch(/^C has no list, set or map type/);
    for (const qid of questions) expect(reasons.get(`shell/${qid}`)).toMatch(/^a bash function can neither/);
    for (const qid of questions) expect(reasons.get(`sql/${qid}`)).toMatch(/^SQL has no functions/);
    for (const language of ["racket", "verilog"])
      for (const qid of questions)
        expect(reasons.get(`${language}/${qid}`)).toMatch(/^no harness generator for/);
    expect(reasons.size).toBe(1 + containers.length + 4 * questions.length);
    runner = createCodeRunner(sandboxConfigSchema.parse({ workers: 2 }));
    const lines = [
      ...ALL_PREDICTIONS,
      { qid: "no_such_question", id: "x", language: "python", code: "", expected: "Had Error" as const },
    ].map(({ expected: _, ...value }, i) => ({ value, line: i + 1 }));
    run = await evaluatePredictions(runner, parsePredictions(lines), await readTestDir(dir), {
      concurrency: 2,
      compileTimeoutS: 60,
      runTimeoutS: 4,
    });
    metrics = computeMetrics(run.results, [1, 2]);
  });

  afterAll(async () => {
    await runner?.close();
  });

  it("gives every prediction the outcome it was written to get", () => {
    const got = run.results.map(
      (r) => `${r.language} ${r.qid} ${r.id}: ${r.outcome}${r.outcome === "Passed" ? "" : ` (${r.reason})`}`,
    );
    const want = ALL_PREDICTIONS.map((p, i) => {
      const r = run.results[i]!;
      return `${r.language} ${p.qid} ${p.id}: ${p.expected}${p.expected === "Passed" ? "" : ` (${r.reason})`}`;
    });
    expect(got).toEqual(want);
  });

  it("covers fifteen languages and every outcome", () => {
    // Every language with a harness (test/eval/harness.test.ts lists them by name).
    expect(Object.keys(metrics.by_language)).toEqual(harnessLanguages().sort());
    expect(Object.keys(metrics.by_language)).toHaveLength(15);
    expect(metrics.overall.outcomes).toEqual({
      Passed: 60,
      "Failed Tests": 3,
      "Had Error": 2,
      "Had Runtime Error": 7,
      "Timed Out": 1,
    });
  });

  it("records per-test results, including a missing test and a compile error", () => {
    const find = (language: string, id: string) =>
      run.results.find((r) => r.language === language && r.id === id)!;
    expect(find("cpp", "exits-early")).toMatchObject({
      test_results: { "0": "PASSED", "1": "MISSING", "2": "MISSING" },
      reason: "2 of 3 tests never reported (exit code 0)",
    });
    expect(find("rust", "wrong-type").reason).toMatch(/^compile error/);
    expect(find("rust", "wrong-type").compile_stderr).toContain("mismatched types");
    // The rust compile failed, so there is no run step; the commands are the sandbox's language table's.
    expect(find("rust", "wrong-type").commands).toEqual([
      expect.objectContaining({
        step: "compile",
        status: "Finished",
        command: expect.arrayContaining(["/usr/bin/rustc", "main.rs"]),
      }),
    ]);
    expect(find("python", "empty-divides").commands).toEqual([
      expect.objectContaining({
        step: "run",
        status: "Finished",
        return_code: 0,
        command: ["/usr/bin/python3", "-u", "main.py"],
      }),
    ]);
    expect(find("java", "out-of-range").test_results).toEqual({
      "0": "FAILED",
      "1": "StringIndexOutOfBoundsException",
    });
    expect(find("python", "empty-divides").test_results).toEqual({
      "0": "PASSED",
      "1": "PASSED",
      "2": "ZeroDivisionError",
    });
    expect(find("javascript", "spins").outcome).toBe("Timed Out");
    expect(find("c", "null").test_results).toEqual({ "0": "SIGSEGV", "1": "SIGSEGV" });
    expect(find("c", "divides").test_results).toEqual({ "0": "SIGFPE", "1": "SIGFPE" });
    expect(find("perl", "dies").test_results).toEqual({ "0": "PASSED", "1": "PASSED", "2": "die" });
  });

  it("removes the predictions' own mains where the harness brings one", () => {
    const removed = run.results.filter((r) => r.main_removed).map((r) => `${r.language}/${r.qid}`);
    expect(removed.sort()).toEqual([
      "c/shout",
      "cpp/group_by_length",
      "csharp/distinct_letters",
      "go/group_by_length",
      "java/group_by_length",
      "python/group_by_length",
      "rust/group_by_length",
      "scala/fingerprint",
    ]);
  });

  it("computes pass@k per language from hand-counted n and c", () => {
    const pass = (language: string, k: number) => metrics.by_language[language]?.pass_at_k[`pass@${k}`];
    // python: 11 questions; mean has n=3 c=1 (pass@1 1/3, pass@2 2/3), halve n=2 c=1 (1/2, 1), nine others 1/1.
    expect(pass("python", 1)).toEqual({ value: expect.closeTo((9 + 1 / 3 + 1 / 2) / 11, 12), questions: 11 });
    expect(pass("python", 2)).toEqual({ value: expect.closeTo((2 / 3 + 1) / 2, 12), questions: 2 });
    // javascript: distinct_letters has only the spinning answer (n=1 c=0); nine other questions pass.
    expect(pass("javascript", 1)).toEqual({ value: expect.closeTo(9 / 10, 12), questions: 10 });
    expect(pass("javascript", 2)).toEqual({ value: null, questions: 0 });
    // java: distinct_letters only has the out-of-range answer.
    expect(pass("java", 1)).toEqual({ value: 0.75, questions: 4 });
    // go and cpp: one question each with n=2 c=1.
    expect(pass("go", 2)).toEqual({ value: 1, questions: 1 });
    expect(pass("cpp", 1)).toEqual({ value: expect.closeTo((1 + 1 + 1 / 2) / 3, 12), questions: 3 });
    // lua: mean only has the answer that raises; R runs its three questions.
    expect(pass("lua", 1)).toEqual({ value: expect.closeTo(2 / 3, 12), questions: 3 });
    expect(pass("r", 1)).toEqual({ value: 1, questions: 3 });
    // perl: mean only has the answer that dies; c: two of five questions only have crashing answers.
    expect(pass("perl", 1)).toEqual({ value: 0.75, questions: 4 });
    expect(pass("c", 1)).toEqual({ value: 0.6, questions: 5 });
    expect(pass("scala", 1)).toEqual({ value: 1, questions: 1 });
    expect(metrics.overall.pass_at_k["pass@1"]?.questions).toBe(67);
  });

  it("lists a prediction for an unknown question as unmatched instead of running it", () => {
    expect(run.unmatched).toEqual([{ qid: "no_such_question", id: "x", language: "python" }]);
  });
});
