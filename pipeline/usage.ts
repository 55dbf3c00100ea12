// Per-stage accounting of LLM and sandbox traffic. The LLM layer and the sandbox client add to it;
// the runner keeps it in the stage's manifest so `status` can show requests, tokens, cost and what
// each endpoint did, across resumed runs.
import type { EndpointStats, EndpointUsageSink } from "./balance/pool.js";

export type { EndpointStats } from "./balance/pool.js";

export interface UsageTotals {
  requests: number;
  /** answered from the persistent response cache: not sent, not paid */
  cachedRequests: number;
  failedRequests: number;
  promptTokens: number;
  completionTokens: number;
  costUsd: number;
  /**
   * Per endpoint (an LLM server's base URL, a sandbox's /run_code URL, without credentials): what
   * was sent there. Absent until a request went to one.
   */
  endpoints?: Record<string, EndpointStats>;
}

type CountKey = Exclude<keyof UsageTotals, "endpoints">;

const COUNT_KEYS: readonly CountKey[] = [
  "requests",
  "cachedRequests",
  "failedRequests",
  "promptTokens",
  "completionTokens",
  "costUsd",
];

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

function emptyEndpoint(): EndpointStats {
  return { requests: 0, answered: 0, failures: 0, ejections: 0, latencyMs: 0 };
}

export class UsageMeter implements EndpointUsageSink {
  readonly totals: UsageTotals;
  constructor(start?: Partial<UsageTotals>) {
    const { endpoints, ...counts } = start ?? {};
    this.totals = { ...emptyUsage(), ...counts };
    if (endpoints) {
      // A copy: the previous manifest's object must not change under it.
      this.totals.endpoints = Object.fromEntries(
        Object.entries(endpoints).map(([name, stats]) => [name, { ...emptyEndpoint(), ...stats }]),
      );
    }
  }
  add(delta: Partial<Omit<UsageTotals, "endpoints">>): void {
    for (const key of COUNT_KEYS) {
      const value = delta[key];
      if (value !== undefined) this.totals[key] += value;
    }
  }
  endpoint(name: string, delta: Partial<EndpointStats>): void {
    if (!this.totals.endpoints) this.totals.endpoints = {};
    let stats = this.totals.endpoints[name];
    if (!stats) {
      stats = emptyEndpoint();
      this.totals.endpoints[name] = stats;
    }
    for (const key of Object.keys(delta) as (keyof EndpointStats)[]) stats[key] += delta[key] ?? 0;
  }
}

/** The sum of two stages' or shards' usage, endpoints merged by name. */
export function sumUsage(a: UsageTotals, b: UsageTotals): UsageTotals {
  const meter = new UsageMeter(a);
  meter.add(b);
  for (const [name, stats] of Object.entries(b.endpoints ?? {})) meter.endpoint(name, stats);
  return meter.totals;
}

/** Mean answered latency of an endpoint in ms, or undefined before its first answer. */
export function meanLatencyMs(stats: EndpointStats): number | undefined {
  return stats.answered > 0 ? stats.latencyMs / stats.answered : undefined;
}

/** One line per endpoint, for `status` and the end of a run: requests, failures, ejections, latency. */
export function describeEndpoints(usage: UsageTotals | undefined): string[] {
  return Object.entries(usage?.endpoints ?? {}).map(([name, s]) => {
    const mean = meanLatencyMs(s);
    return (
      `${name}: ${s.requests} requests, ${s.failures} failed, ${s.ejections} ejections, ` +
      `mean latency ${mean === undefined ? "-" : `${Math.round(mean)} ms`}`
    );
  });
}
