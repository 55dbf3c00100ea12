// The time a stage could not beat, from the same run's figures: the LLM-bound ideal, the
// sandbox-bound ideal (its programs at the sandbox's measured rate, their busy time over its workers,
// or the longest program, plus the calls the sandbox waits on) and one record's chain of calls. The
// stage's overhead is its wall time past the largest (leetcode: its judging plus its writing); the
// shares say where the time went. Details: docs/BENCHMARKS.md, "End to end".
import type { SandboxUsage } from "../../pipeline/usage.js";

/** Per LLM stage: share of its requests the busiest role answers; calls before that role's first;
 * calls and programs one record makes one after another (with the answers the benchmark's server
 * writes); calls a record makes before its first program and after its last (`before`, `after`);
 * `phased`: its sandbox work comes before its LLM work instead of beside it. */
export const LLM_SHAPE: Record<
  string,
  {
    busiest: number;
    lead: number;
    chain: number;
    runs: number;
    before: number;
    after: number;
    phased?: boolean;
  }
> = {
  // one scorer; the second prompt only after the first
  filter: { busiest: 1, lead: 0, chain: 2, runs: 0, before: 0, after: 0 },
  // weak answer, run, then strong: analysis, reviewer, refinement, run, analysis
  simulate: { busiest: 4 / 5, lead: 1, chain: 5, runs: 2, before: 1, after: 1 },
  // strong only: the mistake, run, the fix, run, the analysis of the fixed run
  correct: { busiest: 1, lead: 0, chain: 3, runs: 2, before: 1, after: 1 },
  // TACO's solutions judged first; then, one dialogue's turns one after another: at most a first
  // text, a second solution's text and two translations (the benchmark's server writes them no code,
  // so none is judged)
  leetcode: { busiest: 1, lead: 0, chain: 4, runs: 0, before: 0, after: 0, phased: true },
};

export interface IdealInput {
  stage: string;
  wallS: number;
  /** requests sent to the LLM (not answered from the cache) */
  requests: number;
  latencyS: number;
  llmConcurrency: number;
  /** the programs the stage ran in the sandbox and their busy time (its manifest's `sandbox`) */
  sandbox: SandboxUsage | undefined;
  /** the sandbox alone, programs per second, with the stage's workers */
  sandboxRate: number;
  workers: number;
}

export interface Ideal {
  llmS: number;
  sandboxS: number;
  chainS: number;
  idealS: number;
  bound: "LLM" | "sandbox" | "LLM+sandbox" | "chain" | "pipeline";
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
  // programs at the rate of the benchmark's own, or the time the sandbox says they took over its
  // workers, or the longest one, whichever is longer (a stage's programs may be heavier than the
  // baseline's, and one program's time is never shared between workers)
  const programsS = Math.max(
    (x.sandbox?.runs ?? 0) / x.sandboxRate,
    (x.sandbox?.busyMs ?? 0) / 1000 / x.workers,
    (x.sandbox?.longestMs ?? 0) / 1000,
  );
  // the sandbox has nothing to run before a record's first calls are answered, nor after its last
  // program while the calls after it are answered
  const waitS = programsS > 0 && shape && !shape.phased ? (shape.before + shape.after) * x.latencyS : 0;
  const sandboxS = programsS + waitS;
  const idealS = shape?.phased ? programsS + Math.max(llmS, chainS) : Math.max(llmS, sandboxS, chainS);
  const bound =
    idealS === 0
      ? "pipeline"
      : shape?.phased && programsS > 0
        ? "LLM+sandbox"
        : idealS === llmS
          ? "LLM"
          : idealS === sandboxS
            ? "sandbox"
            : "chain";
  const part = (s: number) => Math.min(1, s / x.wallS);
  return {
    llmS,
    sandboxS,
    chainS,
    idealS,
    bound,
    overhead: idealS > 0 ? x.wallS / idealS - 1 : undefined,
    share: {
      llm: part(Math.max(llmS, chainS)),
      sandbox: part(programsS),
      pipeline: 1 - part(idealS),
    },
  };
}
