// Spreads requests over replicas of one service (LLM servers of a role, /run_code servers): each goes
// to the replica with the fewest outstanding, so a slow one is given fewer. One that fails
// `eject_after` times in a row is out for `eject_s`, then gets one trial request; while trials fail
// the time out doubles up to `max_eject_s`. A 429 with Retry-After pauses only its own server.

import { onAbort } from "../abort.js";
import type { BalanceConfig } from "./config.js";

/** What one endpoint did, for the usage in a stage's manifest. */
export interface EndpointStats {
  /** requests sent to it */
  requests: number;
  /** requests it answered (any answer that was not a failure of the endpoint) */
  answered: number;
  /** connection errors, 5xx, timeouts, 429s */
  failures: number;
  /** times it was taken out of rotation */
  ejections: number;
  /** summed over the answered requests; mean = latencyMs / answered */
  latencyMs: number;
}

export function emptyEndpoint(): EndpointStats {
  return { requests: 0, answered: 0, failures: 0, ejections: 0, latencyMs: 0 };
}

/** Where a lease reports what its endpoint did (a stage's UsageMeter). */
export interface EndpointUsageSink {
  endpoint(name: string, delta: Partial<EndpointStats>): void;
}

/**
 * How a request ended, as far as its endpoint's health goes:
 * - `answered`: the endpoint works (also a 4xx about the request itself);
 * - `failed`: the endpoint did not work (connection, 5xx, timeout);
 * - `paused`: it asked for a pause (429), for `pauseMs` if it said how long;
 * - `abandoned`: the caller gave up; says nothing about the endpoint.
 */
export type LeaseOutcome = "answered" | "failed" | "paused" | "abandoned";

export interface PoolOptions {
  /** requests in flight at once per endpoint */
  capacity: number;
  balance: BalanceConfig;
  /** for messages about ejections and returns */
  log?: (message: string) => void;
  /** for tests of timing-free logic; defaults to Date.now */
  now?: () => number;
}

class Member<T> {
  outstanding = 0;
  failuresInARow = 0;
  /** 0: in rotation; otherwise out until then, after which one trial request may go */
  ejectedUntil = 0;
  /** how many trials failed since it was first taken out, for the doubling */
  ejectionsInARow = 0;
  /** a trial request is out: nothing else goes here until it ends */
  probing = false;
  pausedUntil = 0;
  readonly stats = emptyEndpoint();
  constructor(
    readonly name: string,
    readonly target: T,
  ) {}
}

export class Lease<T> {
  private ended = false;
  private readonly started = performance.now();
  constructor(
    private readonly pool: EndpointPool<T>,
    private readonly member: Member<T>,
    private readonly sink: EndpointUsageSink | undefined,
  ) {}

  get name(): string {
    return this.member.name;
  }

  get target(): T {
    return this.member.target;
  }

  /** Ends the request; only the first call counts. `pauseMs` goes with `paused`. */
  end(outcome: LeaseOutcome, pauseMs?: number): void {
    if (this.ended) return;
    this.ended = true;
    const latency = performance.now() - this.started;
    this.pool.settle(this.member, outcome, latency, pauseMs, this.sink);
  }
}

export class EndpointPool<T> {
  private readonly members: Member<T>[];
  private readonly options: PoolOptions;
  private readonly now: () => number;
  /** where the next tie-break starts, so equal endpoints take turns */
  private turn = 0;
  private waiters = new Set<() => void>();

  constructor(endpoints: readonly { name: string; target: T }[], options: PoolOptions) {
    if (endpoints.length === 0) throw new Error("EndpointPool needs at least one endpoint");
    this.members = endpoints.map((e) => new Member(e.name, e.target));
    this.options = options;
    this.now = options.now ?? Date.now;
  }

  /** Every endpoint's totals since the pool was made. */
  stats(): Record<string, EndpointStats> {
    return Object.fromEntries(this.members.map((m) => [m.name, { ...m.stats }]));
  }

  /**
   * A lease on the endpoint with the fewest requests outstanding, among those in rotation, not
   * paused and not full; one whose time out is over takes a trial request. Endpoints in `avoid`
   * (those a request already failed on) are taken only when every other one is out or paused: one
   * that is merely full is waited for. Undefined when none can be taken now.
   */
  tryAcquire(avoid?: ReadonlySet<string>, sink?: EndpointUsageSink): Lease<T> | undefined {
    const now = this.now();
    let best: Member<T> | undefined;
    let fallback: Member<T> | undefined;
    let otherIsLive = false;
    const n = this.members.length;
    for (let i = 0; i < n; i++) {
      const member = this.members[(this.turn + i) % n]!;
      const avoided = avoid?.has(member.name) === true;
      if (!avoided && this.live(member, now)) otherIsLive = true;
      if (!this.usable(member, now)) continue;
      if (avoided) {
        if (!fallback || member.outstanding < fallback.outstanding) fallback = member;
      } else if (!best || member.outstanding < best.outstanding) {
        best = member;
      }
    }
    best ??= otherIsLive ? undefined : fallback;
    if (!best) return undefined;
    this.turn = (this.turn + 1) % n;
    if (best.ejectedUntil !== 0) best.probing = true;
    best.outstanding++;
    best.stats.requests++;
    sink?.endpoint(best.name, { requests: 1 });
    return new Lease(this, best, sink);
  }

  /** Like tryAcquire, waiting until an endpoint is usable; rejects with `aborted()` when `signal` fires. */
  async acquire(
    avoid: ReadonlySet<string> | undefined,
    sink: EndpointUsageSink | undefined,
    signal: AbortSignal | undefined,
    aborted: () => Error,
  ): Promise<Lease<T>> {
    for (;;) {
      if (signal?.aborted) throw aborted();
      const lease = this.tryAcquire(avoid, sink);
      if (lease) return lease;
      await this.change(signal, aborted);
    }
  }

  /** Whether an endpoint other than those in `avoid` is in rotation and not paused (maybe full). */
  hasOther(avoid: ReadonlySet<string>): boolean {
    const now = this.now();
    return this.members.some((m) => !avoid.has(m.name) && (this.live(m, now) || this.usable(m, now)));
  }

  /** In rotation and not paused, whether or not it is full. */
  private live(member: Member<T>, now: number): boolean {
    return member.ejectedUntil === 0 && member.pausedUntil <= now;
  }

  private usable(member: Member<T>, now: number): boolean {
    if (member.pausedUntil > now) return false;
    if (member.outstanding >= this.options.capacity) return false;
    if (member.ejectedUntil === 0) return true;
    return member.ejectedUntil <= now && !member.probing;
  }

  /** Resolves when a lease ends or the earliest pause or time out runs out. */
  private change(signal: AbortSignal | undefined, aborted: () => Error): Promise<void> {
    const now = this.now();
    let next = Number.POSITIVE_INFINITY;
    for (const m of this.members) {
      if (m.pausedUntil > now) next = Math.min(next, m.pausedUntil);
      else if (m.ejectedUntil > now) next = Math.min(next, m.ejectedUntil);
    }
    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      let unwatch = () => {};
      const wake = () => {
        clearTimeout(timer);
        this.waiters.delete(wake);
        unwatch();
        resolve();
      };
      const stop = () => {
        clearTimeout(timer);
        this.waiters.delete(wake);
        reject(aborted());
      };
      if (Number.isFinite(next)) timer = setTimeout(wake, Math.max(1, next - now));
      this.waiters.add(wake);
      if (signal) unwatch = onAbort(signal, stop);
    });
  }

  /** @internal called by Lease.end */
  settle(
    member: Member<T>,
    outcome: LeaseOutcome,
    latencyMs: number,
    pauseMs: number | undefined,
    sink: EndpointUsageSink | undefined,
  ): void {
    member.outstanding--;
    const wasProbe = member.probing;
    member.probing = false;
    const now = this.now();
    if (outcome === "answered") {
      member.stats.answered++;
      // Whole milliseconds: the sums live in manifests, where float noise only distracts.
      const ms = Math.round(latencyMs);
      member.stats.latencyMs += ms;
      sink?.endpoint(member.name, { answered: 1, latencyMs: ms });
      member.failuresInARow = 0;
      if (wasProbe) this.readmit(member);
    } else if (outcome === "paused") {
      member.stats.failures++;
      sink?.endpoint(member.name, { failures: 1 });
      // It answered, if only to say wait: it is alive.
      member.failuresInARow = 0;
      if (wasProbe) this.readmit(member);
      if (pauseMs !== undefined) member.pausedUntil = Math.max(member.pausedUntil, now + pauseMs);
    } else if (outcome === "failed") {
      member.stats.failures++;
      sink?.endpoint(member.name, { failures: 1 });
      member.failuresInARow++;
      if (wasProbe) this.eject(member, now, sink, "its trial request failed");
      // A lone endpoint is never ejected: there is nowhere else to send its requests, and the
      // caller's own backoff already paces them.
      else if (
        member.ejectedUntil === 0 &&
        this.members.length > 1 &&
        member.failuresInARow >= this.options.balance.eject_after
      ) {
        this.eject(member, now, sink, `${member.failuresInARow} requests in a row failed`);
      }
    }
    for (const wake of [...this.waiters]) wake();
  }

  private eject(member: Member<T>, now: number, sink: EndpointUsageSink | undefined, why: string): void {
    const { eject_s, max_eject_s } = this.options.balance;
    const seconds = Math.min(max_eject_s, eject_s * 2 ** member.ejectionsInARow);
    member.ejectionsInARow++;
    member.ejectedUntil = now + seconds * 1000;
    member.stats.ejections++;
    sink?.endpoint(member.name, { ejections: 1 });
    this.options.log?.(
      `endpoint ${member.name} taken out of rotation for ${seconds} s (${why}); one trial request goes after that`,
    );
  }

  private readmit(member: Member<T>): void {
    member.ejectedUntil = 0;
    member.ejectionsInARow = 0;
    this.options.log?.(`endpoint ${member.name} is back in rotation (its trial request was answered)`);
  }
}
