// pass@1 after each round, as the paper's multi-turn table reports it: greedy decoding gives one
// sample per task, so pass@1 after round r is the share of tasks whose code passed in some round
// up to r. Invalid benchmark rows are counted apart and left out of the share.
import type { ResultLine } from "./results-file.js";
import { ROUND_OUTCOMES, type RoundOutcome } from "./session.js";

export interface RoundFigure {
  round: number;
  /** tasks passed in this round or an earlier one */
  passed: number;
  tasks: number;
  /** passed / tasks; null when there are no tasks */
  pass_at_1: number | null;
  /** what this round's attempts came to (tasks already passed make none) */
  outcomes: Record<RoundOutcome, number>;
}

export interface ModelEvalMetrics {
  tasks: number;
  invalid_tasks: number;
  rounds: RoundFigure[];
}

function noOutcomes(): Record<RoundOutcome, number> {
  return Object.fromEntries(ROUND_OUTCOMES.map((o) => [o, 0])) as Record<RoundOutcome, number>;
}

export function computeModelMetrics(tasks: Iterable<ResultLine[]>, rounds: number): ModelEvalMetrics {
  let scored = 0;
  let invalid = 0;
  const passedBy = new Array<number>(rounds + 1).fill(0);
  const outcomes = Array.from({ length: rounds + 1 }, noOutcomes);
  for (const lines of tasks) {
    if (lines.some((line) => line.outcome === "invalid-task")) {
      invalid++;
      continue;
    }
    scored++;
    for (const line of lines) {
      if (line.outcome === "invalid-task" || line.round > rounds) continue;
      outcomes[line.round]![line.outcome]++;
      if (line.outcome === "passed") passedBy[line.round]!++;
    }
  }
  const figures: RoundFigure[] = [];
  let passed = 0;
  for (let round = 1; round <= rounds; round++) {
    passed += passedBy[round]!;
    figures.push({
      round,
      passed,
      tasks: scored,
      pass_at_1: scored === 0 ? null : passed / scored,
      outcomes: outcomes[round]!,
    });
  }
  return { tasks: scored, invalid_tasks: invalid, rounds: figures };
}

/** The printed table: one row per round, like the paper's multi-turn columns. */
export function roundsTable(metrics: ModelEvalMetrics): { header: string[]; rows: (string | number)[][] } {
  const header = ["round", "pass@1", "passed", "tasks", ...ROUND_OUTCOMES.filter((o) => o !== "passed")];
  const rows = metrics.rounds.map((r) => [
    r.round,
    r.pass_at_1 === null ? "-" : `${(r.pass_at_1 * 100).toFixed(1)}%`,
    r.passed,
    r.tasks,
    ...ROUND_OUTCOMES.filter((o) => o !== "passed").map((o) => r.outcomes[o]),
  ]);
  return { header, rows };
}
