// The paper takes TACO's solutions as they are; here every solution is run on its problem's tests
// before it may appear in a dialogue, and only those that pass are used. Copies of one program
// (TACO repeats some, differing only in blank lines or comments) are judged once and used once.
import pLimit from "p-limit";
import { SandboxOutageError } from "../../pipeline/execution/errors.js";
import type { Reject } from "../../pipeline/record.js";
import type { LeetcodeConfig } from "./config.js";
import { type Judge, type Judged, limitTests, VERDICTS, type Verdict } from "./judge.js";
import type { TacoProblem } from "./taco.js";

export interface ValidatedSolution {
  /** position in the row's `solutions` */
  index: number;
  code: string;
  judged: Judged;
}

export interface ValidatedProblem {
  problem: TacoProblem;
  /** the solutions that passed every test, in TACO's order */
  passing: ValidatedSolution[];
  /** every solution judged, with its verdict */
  judged: ValidatedSolution[];
}

export interface ValidationStats {
  problems: number;
  /** problems with at least one passing solution */
  usable: number;
  solutions: Record<Verdict | "duplicate" | "beyond-max" | "sandbox-error", number>;
  verdicts_computed: number;
  verdicts_reused: number;
}

/** A program with comments and blank lines gone, for spotting copies. */
function shape(code: string): string {
  return code
    .split("\n")
    .map((line) => line.replace(/#.*$/, "").trimEnd())
    .filter((line) => line.trim() !== "")
    .join("\n");
}

export async function validateSolutions(
  problems: readonly TacoProblem[],
  judge: Judge,
  config: LeetcodeConfig["validation"],
  concurrency: number,
  signal: AbortSignal,
): Promise<{
  validated: ValidatedProblem[];
  rejects: Reject[];
  stats: ValidationStats;
  sandboxErrors: string[];
}> {
  const stats: ValidationStats = {
    problems: problems.length,
    usable: 0,
    solutions: {
      ...Object.fromEntries(VERDICTS.map((v) => [v, 0])),
      duplicate: 0,
      "beyond-max": 0,
      "sandbox-error": 0,
    } as ValidationStats["solutions"],
    verdicts_computed: 0,
    verdicts_reused: 0,
  };
  const limit = pLimit(concurrency);
  const sandboxErrors: string[] = [];
  const results = await Promise.all(
    problems.map(async (problem) => {
      const tests = limitTests(problem.tests, config.max_tests);
      const task = { problemId: problem.id, tests, starterCode: problem.starterCode };
      const seen = new Set<string>();
      const unique: { index: number; code: string }[] = [];
      for (const [index, code] of problem.solutions.entries()) {
        const key = shape(code);
        if (seen.has(key)) {
          stats.solutions.duplicate++;
          continue;
        }
        seen.add(key);
        if (unique.length >= config.max_solutions) stats.solutions["beyond-max"]++;
        else unique.push({ index, code });
      }
      const judged = await Promise.all(
        unique.map((s) =>
          limit(async (): Promise<ValidatedSolution | undefined> => {
            if (signal.aborted) return undefined;
            try {
              return { ...s, judged: await judge.judge(task, s.code, "python") };
            } catch (error) {
              if (!(error instanceof SandboxOutageError) || signal.aborted) throw error;
              stats.solutions["sandbox-error"]++;
              sandboxErrors.push(`${problem.id} solution ${s.index}: ${error.message}`);
              return undefined;
            }
          }),
        ),
      );
      const done = judged.filter((j): j is ValidatedSolution => j !== undefined);
      for (const j of done) stats.solutions[j.judged.verdict]++;
      return {
        problem,
        judged: done,
        passing: done.filter((j) => j.judged.verdict === "passed"),
        complete: done.length === unique.length,
      };
    }),
  );
  stats.verdicts_computed = judge.computed;
  stats.verdicts_reused = judge.reused;
  const validated: ValidatedProblem[] = [];
  const rejects: Reject[] = [];
  for (const r of results) {
    if (r.passing.length > 0) {
      validated.push({ problem: r.problem, passing: r.passing, judged: r.judged });
      stats.usable++;
    } else if (r.complete) {
      rejects.push({
        id: r.problem.id,
        reason: "no-passing-solution",
        detail: r.judged
          .map(
            (j) =>
              `solution ${j.index}: ${j.judged.verdict}${j.judged.detail ? ` (${j.judged.detail})` : ""}`,
          )
          .join("; "),
        record: { name: r.problem.name, url: r.problem.url, solutions: r.problem.solutions.length },
      });
    }
  }
  return { validated, rejects, stats, sandboxErrors };
}
