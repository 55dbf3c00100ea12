// Per-stage accounting of LLM and sandbox traffic. The LLM layer and the sandbox client add to it;
// the runner keeps it in the stage's manifest so `status` can show requests, tokens, cost, programs
// and what each endpoint did, across resumed runs.
import { type EndpointStats, type EndpointUsageSink, emptyEndpoint } from "./balance/pool.js";

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
  return Object.fromEntries(COUNT_KEYS.map((key) => [key, 0])) as Record<CountKey, number>;
}

export class UsageMeter implements EndpointUsageSink {
  readonly totals: UsageTotals;
  /** the programs the sandbox ran, carried on from the previous runs' */
  programs: SandboxUsage | undefined;
  constructor(start?: Partial<UsageTotals>, programs?: SandboxUsage) {
    this.programs = sumSandbox([programs]);
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
  /** one program the sandbox ran, and the server that ran it where there are several */
  ran(busyMs: number, endpoint?: string): void {
    this.programs = sumSandbox([
      this.programs,
      {
        runs: 1,
        busyMs,
        ...(endpoint === undefined ? {} : { endpoints: { [endpoint]: { runs: 1, busyMs } } }),
      },
    ]);
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

/**
 * One line per endpoint, for `status` and the end of a run: requests, failures, ejections, latency,
 * and for a /run_code server of several, the programs it ran.
 */
export function describeEndpoints(usage: UsageTotals | undefined, sandbox?: SandboxUsage): string[] {
  return Object.entries(usage?.endpoints ?? {}).map(([name, s]) => {
    const mean = meanLatencyMs(s);
    const ran = sandbox?.endpoints?.[name];
    return (
      `${name}: ${s.requests} requests, ${s.failures} failed, ${s.ejections} ejections, ` +
      `mean latency ${mean === undefined ? "-" : `${Math.round(mean)} ms`}` +
      (ran ? `, ${describeSandbox(ran)}` : "")
    );
  });
}

/**
 * Programs a stage ran in the sandbox and the time the sandbox says they took (compile plus run, in
 * whole milliseconds per program). A program is counted when the sandbox ran something of it; a
 * refusal or an outage is not a program, and a result replayed from a stage's kept results is not one
 * either. Counted per run and carried on like the LLM usage: a kill -9 loses what ran since the last
 * checkpoint, and a redone record counts again what was not kept (docs/sandbox.md).
 */
export interface SandboxUsage {
  runs: number;
  busyMs: number;
  /**
   * The longest program's busy time (no program's time can be shared between workers: a stage can
   * never finish sooner). Kept where more than one program ran; for one, it is `busyMs`.
   */
  longestMs?: number;
  /** per /run_code server (shown URL), when `sandbox.url` lists several */
  endpoints?: Record<string, { runs: number; busyMs: number }>;
}

/** Adds `other`'s programs to `into`. */
function addSandbox(into: SandboxUsage, other: SandboxUsage): void {
  into.runs += other.runs;
  into.busyMs += other.busyMs;
  const longest = other.longestMs ?? (other.runs === 1 ? other.busyMs : 0);
  if (longest > (into.longestMs ?? 0)) into.longestMs = longest;
  for (const [name, at] of Object.entries(other.endpoints ?? {})) {
    into.endpoints ??= {};
    const sum = into.endpoints[name] ?? { runs: 0, busyMs: 0 };
    into.endpoints[name] = { runs: sum.runs + at.runs, busyMs: sum.busyMs + at.busyMs };
  }
}

/** The sum of runs', stages' or shards' sandbox usage (a copy); undefined when none ran a program. */
export function sumSandbox(all: readonly (SandboxUsage | undefined)[]): SandboxUsage | undefined {
  const sum: SandboxUsage = { runs: 0, busyMs: 0 };
  for (const usage of all) if (usage) addSandbox(sum, usage);
  if (sum.runs === 0) return undefined;
  if (sum.runs === 1) delete sum.longestMs;
  return sum;
}

/** `12,345 programs, 678.9 s busy`, for `status` and the end of a run. */
export function describeSandbox(usage: SandboxUsage): string {
  return `${usage.runs.toLocaleString("en-US")} programs, ${(usage.busyMs / 1000).toFixed(1)} s busy`;
}
