// Per-stage accounting of LLM traffic. The LLM layer adds to it; the runner keeps it in the stage's
// manifest so `status` can show requests, tokens and cost across resumed runs.

export interface UsageTotals {
  requests: number;
  /** answered from the persistent response cache: not sent, not paid */
  cachedRequests: number;
  failedRequests: number;
  promptTokens: number;
  completionTokens: number;
  costUsd: number;
}

export function emptyUsage(): UsageTotals {
  return {
    requests: 0,
    cachedRequests: 0,
    failedRequests: 0,
    promptTokens: 0,
    completionTokens: 0,
    costUsd: 0,
  };
}

export class UsageMeter {
  readonly totals: UsageTotals;
  constructor(start?: Partial<UsageTotals>) {
    this.totals = { ...emptyUsage(), ...start };
  }
  add(delta: Partial<UsageTotals>): void {
    for (const key of Object.keys(delta) as (keyof UsageTotals)[]) {
      this.totals[key] += delta[key] ?? 0;
    }
  }
}
