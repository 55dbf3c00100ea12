// Evaluation throughput through the embedded sandbox, per language: one program per prediction
// holding all its cases (what `eval run` does) against one program per case, and
// `evaluatePredictions` against bare `runner.run` on the same programs (its overhead; near 1.00).
//
//   pnpm exec tsx bench/eval/grouping.ts [--cases 10] [--workers 2] [--rounds 2]
import { availableParallelism, loadavg } from "node:os";
import { buildProgram, evaluatePredictions, type TestIndex } from "../../pipeline/eval/evaluate.js";
import { generateTests } from "../../pipeline/eval/generate.js";
import type { GeneratedTest, Prediction } from "../../pipeline/eval/types.js";
import { createCodeRunner, sandboxConfigSchema } from "../../pipeline/sandbox/index.js";
import { numberArg } from "../args.js";

const CASES = numberArg("cases", 10);
const ROUNDS = numberArg("rounds", 2);
const WORKERS = numberArg("workers", 2);

const SUM: Record<string, string> = {
  python: "def sumList(xs):\n    return sum(xs)\n",
  cpp: "int sumList(vector<int> xs) { int s = 0; for (int x : xs) s += x; return s; }",
  java: "class Solution {\n  public int sumList(ArrayList<Integer> xs) {\n    int s = 0;\n    for (int x : xs) s += x;\n    return s;\n  }\n}",
  go: "func sumList(xs []int) int {\n\ts := 0\n\tfor _, x := range xs {\n\t\ts += x\n\t}\n\treturn s\n}",
};
const LANGUAGES = Object.keys(SUM);

function question(id: string, cases: number[]) {
  return {
    question_id: id,
    entry_fn_name: "sumList",
    schema: { params: [{ name: "xs", type: "list<integer>" }], return: { type: "integer" } },
    test_cases: cases.map((n) => ({
      idx: n,
      inputs: { xs: Array.from({ length: n + 1 }, (_, i) => i) },
      outputs: (n * (n + 1)) / 2,
    })),
  };
}

function index(tests: GeneratedTest[]): TestIndex {
  const byLanguage = new Map<string, Map<string, GeneratedTest>>();
  for (const test of tests) {
    const byQid = byLanguage.get(test.language) ?? new Map<string, GeneratedTest>();
    byQid.set(test.qid, test);
    byLanguage.set(test.language, byQid);
  }
  return byLanguage;
}

const caseIds = Array.from({ length: CASES }, (_, i) => i);
const grouped = generateTests([{ value: question("all", caseIds), line: 1 }], LANGUAGES).tests;
const single = generateTests(
  caseIds.map((n) => ({ value: question(`case-${n}`, [n]), line: n + 1 })),
  LANGUAGES,
).tests;
const predictionsFor = (language: string, qids: string[]): Prediction[] =>
  qids.map((qid) => ({ qid, id: "0", language: language as Prediction["language"], code: SUM[language]! }));

const runner = createCodeRunner(sandboxConfigSchema.parse({ workers: WORKERS }));
const seconds = async (work: () => Promise<unknown>) => {
  const started = performance.now();
  await work();
  return (performance.now() - started) / 1000;
};

console.log(
  `eval grouping bench: ${CASES} test cases, ${WORKERS} workers, ${availableParallelism()} cores, load ${loadavg()[0]!.toFixed(2)}`,
);
console.log("language  grouped_s  per_case_s  speedup  bare_s  eval_s  overhead");
try {
  for (const language of LANGUAGES) {
    const groupedIndex = index(grouped.filter((t) => t.language === language));
    const singleIndex = index(single.filter((t) => t.language === language));
    const groupedPredictions = predictionsFor(language, ["all"]);
    const singlePredictions = predictionsFor(
      language,
      caseIds.map((n) => `case-${n}`),
    );
    // Warm-up: first runs of a toolchain read it from disk.
    await evaluatePredictions(runner, groupedPredictions, groupedIndex, {
      concurrency: WORKERS,
      compileTimeoutS: 60,
    });
    const groupedS = await seconds(() =>
      evaluatePredictions(runner, groupedPredictions, groupedIndex, {
        concurrency: WORKERS,
        compileTimeoutS: 60,
      }),
    );
    const perCaseS = await seconds(async () => {
      const run = await evaluatePredictions(runner, singlePredictions, singleIndex, {
        concurrency: WORKERS,
        compileTimeoutS: 60,
      });
      if (run.results.some((r) => r.outcome !== "Passed"))
        throw new Error(`${language}: a per-case run failed`);
    });
    // Overhead: the same grouped prediction four times, bare runs against the evaluator.
    const four = [0, 1, 2, 3].map((i) => ({ ...groupedPredictions[0]!, id: String(i) }));
    const test = groupedIndex.get(language)!.get("all")!;
    const programs = four.map(
      (p) => buildProgram({ prediction: p, test, fn: "sumList", cls: test.entry_cls_name }).program,
    );
    const bare = () =>
      seconds(async () => {
        const queue = [...programs];
        await Promise.all(
          Array.from({ length: WORKERS }, async () => {
            for (let code = queue.pop(); code !== undefined; code = queue.pop()) {
              await runner.run({ code, language: test.sandbox_language, compile_timeout: 60 });
            }
          }),
        );
      });
    const evaluated = () =>
      seconds(() =>
        evaluatePredictions(runner, four, groupedIndex, { concurrency: WORKERS, compileTimeoutS: 60 }),
      );
    // Alternate the two and keep the best of each: other load on the machine only ever adds time.
    let bareS = Number.POSITIVE_INFINITY;
    let evalS = Number.POSITIVE_INFINITY;
    for (let round = 0; round < ROUNDS; round++) {
      bareS = Math.min(bareS, await bare());
      evalS = Math.min(evalS, await evaluated());
    }
    console.log(
      [
        language.padEnd(8),
        groupedS.toFixed(2).padStart(9),
        perCaseS.toFixed(2).padStart(11),
        `${(perCaseS / groupedS).toFixed(1)}x`.padStart(8),
        bareS.toFixed(2).padStart(7),
        evalS.toFixed(2).padStart(7),
        // Above 1.00: the evaluator costs that much more than sending the finished programs.
        `${(evalS / bareS).toFixed(2)}x`.padStart(9),
      ].join(" "),
    );
  }
} finally {
  await runner.close();
}
