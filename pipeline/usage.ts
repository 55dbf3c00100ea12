// Per-stage accounting of LLM and sandbox traffic. The LLM layer and the sandbox client add to it;
// the runner keeps it in the stage's manifest so `status` can show requests, tokens, cost and what
// each endpoint did, across resumed runs. The sandbox's programs and busy time (SandboxUsage) are
// counted per record and committed with it, like the stage's counters, so they are exact after a
// kill -9 and add up over shards.
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
 * whole milliseconds per program, so sums over records and shards stay exact). A program is counted
 * when the sandbox ran something of it; a refusal or an outage is not a program.
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

/** Where the stage's sandbox face counts each program it ran (metered.ts). */
export interface SandboxRunSink {
  ran(busyMs: number, endpoint?: string): void;
  /** programs an earlier process ran, whose kept results are replayed now (ReplayCosts) */
  add(usage: SandboxUsage | undefined): void;
}

export class SandboxMeter implements SandboxRunSink {
  readonly totals: SandboxUsage = { runs: 0, busyMs: 0 };

  ran(busyMs: number, endpoint?: string): void {
    this.totals.runs++;
    this.totals.busyMs += busyMs;
    this.longest(busyMs);
    if (endpoint !== undefined) this.addEndpoint(endpoint, 1, busyMs);
  }

  private longest(ms: number): void {
    if (ms > (this.totals.longestMs ?? 0)) this.totals.longestMs = ms;
  }

  private addEndpoint(name: string, runs: number, busyMs: number): void {
    this.totals.endpoints ??= {};
    const at = this.totals.endpoints[name] ?? { runs: 0, busyMs: 0 };
    at.runs += runs;
    at.busyMs += busyMs;
    this.totals.endpoints[name] = at;
  }

  /** adds what another meter (a committed record, a shard) counted */
  add(other: SandboxUsage | undefined): void {
    if (!other) return;
    this.totals.runs += other.runs;
    this.totals.busyMs += other.busyMs;
    // counted before the longest was kept: for one program it is its time, for more it is unknown
    this.longest(other.longestMs ?? (other.runs === 1 ? other.busyMs : 0));
    for (const [name, at] of Object.entries(other.endpoints ?? {}))
      this.addEndpoint(name, at.runs, at.busyMs);
  }

  /** a copy for a manifest or an entry; undefined while nothing ran */
  saved(): SandboxUsage | undefined {
    if (this.totals.runs === 0) return undefined;
    const { endpoints, longestMs, ...sums } = this.totals;
    const counts = this.totals.runs > 1 && longestMs !== undefined ? { ...sums, longestMs } : sums;
    return endpoints
      ? { ...counts, endpoints: Object.fromEntries(Object.entries(endpoints).map(([n, e]) => [n, { ...e }])) }
      : counts;
  }
}

/**
 * What the programs behind kept results cost when they ran (an execution journal's runs, a verdict
 * cache's verdicts), so that replaying a result counts its programs as running them would have: once,
 * by the first replay in this process. A result this process made is not here: its programs were
 * counted as they ran.
 */
export class ReplayCosts {
  private readonly unpaid = new Map<string, SandboxUsage>();

  /** an entry read back from its file, with the cost saved beside it (a later line for a key wins) */
  loaded(key: string, cost: unknown): void {
    if (isSandboxUsage(cost)) this.unpaid.set(key, cost);
    else this.unpaid.delete(key);
  }

  /** an entry this process made */
  made(key: string): void {
    this.unpaid.delete(key);
  }

  /** what replaying `key` costs now: its earlier cost the first time, then nothing */
  take(key: string): SandboxUsage | undefined {
    const cost = this.unpaid.get(key);
    this.unpaid.delete(key);
    return cost;
  }
}

const isCount = (n: unknown) => Number.isSafeInteger(n) && (n as number) >= 0;

/** A SandboxUsage as a file may hold it; anything else (a damaged line) counts nothing. */
function isSandboxUsage(value: unknown): value is SandboxUsage {
  if (typeof value !== "object" || value === null) return false;
  const usage = value as Partial<SandboxUsage>;
  if (!isCount(usage.runs) || !isCount(usage.busyMs)) return false;
  if (usage.longestMs !== undefined && !isCount(usage.longestMs)) return false;
  if (usage.endpoints === undefined) return true;
  if (typeof usage.endpoints !== "object" || usage.endpoints === null) return false;
  return Object.values(usage.endpoints).every((e) => isCount(e?.runs) && isCount(e?.busyMs));
}

/** The sum of stages' or shards' sandbox usage; undefined when none ran a program. */
export function sumSandbox(all: readonly (SandboxUsage | undefined)[]): SandboxUsage | undefined {
  const meter = new SandboxMeter();
  for (const usage of all) meter.add(usage);
  return meter.saved();
}

/** `12,345 programs, 678.9 s busy`, for `status` and the end of a run. */
export function describeSandbox(usage: SandboxUsage): string {
  return `${usage.runs.toLocaleString("en-US")} programs, ${(usage.busyMs / 1000).toFixed(1)} s busy`;
}
