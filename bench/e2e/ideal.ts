// The time a stage could not beat, from the same run's figures: the LLM-bound ideal (the busiest role's
// requests x latency / requests in flight, plus the calls that must come before its first one), the
// sandbox-bound ideal (programs run / the sandbox's own throughput, measured alone in this run) and
// the chain of one record (its calls one after another). The stage's own overhead is how far its wall
// time is past the largest of the three; the shares say where the time went.
import { StageStore } from "../../pipeline/store/index.js";

/** Per LLM stage: share of its requests the busiest role answers; calls before that role's first;
 * calls and programs one record makes one after another (with the answers the benchmark's server
 * writes). */
export const LLM_SHAPE: Record<string, { busiest: number; lead: number; chain: number; runs: number }> = {
  // one scorer; the second prompt only after the first
  filter: { busiest: 1, lead: 0, chain: 2, runs: 0 },
  // weak answer, run, then strong: analysis, reviewer, refinement, run, analysis
  simulate: { busiest: 4 / 5, lead: 1, chain: 5, runs: 2 },
  // strong only: the mistake, run, the fix, run, the analysis of the fixed run
  correct: { busiest: 1, lead: 0, chain: 3, runs: 2 },
  // strong only: texts and translations
  leetcode: { busiest: 1, lead: 0, chain: 1, runs: 0 },
};

export interface IdealInput {
  stage: string;
  wallS: number;
  /** requests sent to the LLM (not answered from the cache) */
  requests: number;
  latencyS: number;
  llmConcurrency: number;
  /** programs the stage ran in the sandbox; undefined: not counted */
  sandboxRuns: number | undefined;
  /** the sandbox alone, programs per second, with the stage's workers */
  sandboxRate: number;
  workers: number;
}

export interface Ideal {
  llmS: number;
  sandboxS: number;
  chainS: number;
  idealS: number;
  bound: "LLM" | "sandbox" | "chain" | "pipeline";
  /** wall / ideal - 1; undefined for a stage bound by neither the LLM nor the sandbox */
  overhead: number | undefined;
  share: { llm: number; sandbox: number; pipeline: number };
}

export function idealOf(x: IdealInput): Ideal {
  const shape = LLM_SHAPE[x.stage];
  const llmS = shape
    ? (x.requests * shape.busiest * x.latencyS) / x.llmConcurrency + shape.lead * x.latencyS
    : 0;
  // one program takes workers / rate seconds when every worker is busy
  const chainS =
    shape && x.requests > 0 ? shape.chain * x.latencyS + (shape.runs * x.workers) / x.sandboxRate : 0;
  const sandboxS = (x.sandboxRuns ?? 0) / x.sandboxRate;
  const idealS = Math.max(llmS, sandboxS, chainS);
  const bound =
    idealS === 0 ? "pipeline" : idealS === llmS ? "LLM" : idealS === sandboxS ? "sandbox" : "chain";
  const part = (s: number) => Math.min(1, s / x.wallS);
  return {
    llmS,
    sandboxS,
    chainS,
    idealS,
    bound,
    // leetcode's programs (TACO's tests, translations) are not counted: no ideal to hold it to
    overhead: idealS > 0 && x.stage !== "leetcode" ? x.wallS / idealS - 1 : undefined,
    share: {
      llm: part(Math.max(llmS, chainS)),
      sandbox: part(sandboxS),
      pipeline: 1 - part(idealS),
    },
  };
}

/** Programs a dialogue stage ran for the dialogues it kept (rejected ones ran some too: not counted,
 * so the sandbox ideal is a little low and the overhead a little high). */
export async function sandboxRunsOf(
  dataDir: string,
  stage: string,
  stats: Record<string, unknown> | undefined,
): Promise<number | undefined> {
  if (stage === "validate") {
    const byLanguage = (stats?.blocks_by_language ?? {}) as Record<string, Record<string, number>>;
    let runs = 0;
    for (const outcomes of Object.values(byLanguage)) for (const n of Object.values(outcomes)) runs += n;
    return runs;
  }
  if (stage !== "simulate" && stage !== "correct") return undefined;
  let runs = 0;
  for await (const record of new StageStore(dataDir, stage).read()) {
    const meta = (record.meta ?? {}) as Record<string, unknown>;
    if (stage === "simulate") runs += ((meta.executions as unknown[] | undefined) ?? []).length;
    else {
      for (const key of ["mistake", "fixed"]) {
        const run = meta[key] as { check?: unknown } | undefined;
        if (run) runs += run.check ? 2 : 1;
      }
    }
  }
  return runs;
}
