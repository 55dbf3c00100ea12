// The time a stage could not beat, from the same run's figures: the LLM-bound ideal (the busiest role's
// requests x latency / requests in flight, plus the calls that must come before its first one), the
// sandbox-bound ideal (the programs the stage's manifest says it ran / the sandbox's own throughput,
// measured alone in this run, or their busy time / its workers, whichever is longer) and the chain of
// one record (its calls one after another). The stage's own overhead is how far its wall time is
// past the largest of the three (leetcode judges before it writes: its two add up); the shares say
// where the time went.
import type { SandboxUsage } from "../../pipeline/usage.js";

/** Per LLM stage: share of its requests the busiest role answers; calls before that role's first;
 * calls and programs one record makes one after another (with the answers the benchmark's server
 * writes); `phased`: its sandbox work comes before its LLM work instead of beside it. */
export const LLM_SHAPE: Record<
  string,
  { busiest: number; lead: number; chain: number; runs: number; phased?: boolean }
> = {
  // one scorer; the second prompt only after the first
  filter: { busiest: 1, lead: 0, chain: 2, runs: 0 },
  // weak answer, run, then strong: analysis, reviewer, refinement, run, analysis
  simulate: { busiest: 4 / 5, lead: 1, chain: 5, runs: 2 },
  // strong only: the mistake, run, the fix, run, the analysis of the fixed run
  correct: { busiest: 1, lead: 0, chain: 3, runs: 2 },
  // TACO's solutions judged first, then the strong model's texts and translations (each judged)
  leetcode: { busiest: 1, lead: 0, chain: 1, runs: 0, phased: true },
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
  // workers, whichever is longer (a stage's programs may be heavier than the baseline's)
  const sandboxS = Math.max(
    (x.sandbox?.runs ?? 0) / x.sandboxRate,
    (x.sandbox?.busyMs ?? 0) / 1000 / x.workers,
  );
  const idealS = shape?.phased ? Math.max(llmS + sandboxS, chainS) : Math.max(llmS, sandboxS, chainS);
  const bound =
    idealS === 0
      ? "pipeline"
      : shape?.phased && idealS === llmS + sandboxS && sandboxS > 0
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
      sandbox: part(sandboxS),
      pipeline: 1 - part(idealS),
    },
  };
}
