// The batch loop shared by AutoEval and CommonOJ: every answer against its problem, a few at a
// time, results in input order. One answer's requests go through sandbox/call.ts.
import pLimit from "p-limit";
import type { FusionAnswer } from "./fusion-data.js";
import type { RunLimits } from "./raw-result.js";
import type { PredictionResult } from "./types.js";

/** Limits for each request; unset ones are each dataset type's defaults (see runCommonOJ) or the sandbox's. */
export type FusionRunOptions = RunLimits;

export interface FusionBatch<P> {
  results: PredictionResult[];
  /** answers whose problem id is not in the dataset */
  unmatched: Array<{ qid: string; id: string }>;
  problems: Map<string, P>;
}

/** Runs every answer against its problem with `evaluate`, `concurrency` at a time; input order kept. */
export async function evaluateAnswers<P>(
  problems: Map<string, P>,
  answers: readonly FusionAnswer[],
  evaluate: (problem: P, answer: FusionAnswer) => Promise<PredictionResult>,
  options: {
    concurrency?: number;
    onStart?: (total: number) => void;
    onResult?: (result: PredictionResult) => void;
  } = {},
): Promise<FusionBatch<P>> {
  const limit = pLimit(Math.max(1, options.concurrency ?? 2));
  const unmatched: FusionBatch<P>["unmatched"] = [];
  const matched: Array<{ problem: P; answer: FusionAnswer }> = [];
  for (const answer of answers) {
    const problem = problems.get(answer.qid);
    if (problem === undefined) unmatched.push({ qid: answer.qid, id: answer.id });
    else matched.push({ problem, answer });
  }
  options.onStart?.(matched.length);
  const jobs = matched.map(({ problem, answer }) =>
    limit(async () => {
      const result = await evaluate(problem, answer);
      options.onResult?.(result);
      return result;
    }),
  );
  return { results: await Promise.all(jobs), unmatched, problems };
}
