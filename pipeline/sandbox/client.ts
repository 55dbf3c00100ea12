// A CodeRunner that sends requests to a remote SandboxFusion-compatible POST /run_code (our own
// `pipeline sandbox serve`, or SandboxFusion). Replicas are how sandbox work grows past one machine,
// so it retries what a busy or restarting replica answers (connection errors, 429, 5xx) with backoff,
// honouring Retry-After. Several `sandbox.url`s are balanced like an LLM role's replicas
// (balance/pool.ts), and a run that fails on one goes to another at once.
import pLimit from "p-limit";
import { onAbort, sleep } from "../abort.js";
import { urlList } from "../balance/config.js";
import { EndpointPool, type EndpointUsageSink } from "../balance/pool.js";
import { UserError, unreached } from "../errors.js";
import { createHttpFetch } from "../http-fetch.js";
import { innermost, silentFor } from "../liveness.js";
import { createLogger } from "../log.js";
import { serverBase, serverPrograms, shownServer } from "./capacity.js";
import type { SandboxConfig } from "./config.js";
import { SandboxClosedError, SandboxRemoteError } from "./errors.js";
import { sandboxErrorResponse } from "./request.js";
import type { CodeRunner, CommandRunResult, RunCodeRequest, RunCodeResponse } from "./types.js";

const log = createLogger("sandbox");

const RUN_STATUSES = new Set(["Success", "Failed", "SandboxError"]);

function asResult(value: unknown): CommandRunResult | null {
  return value !== null && typeof value === "object" ? (value as CommandRunResult) : null;
}

/** What a run may carry besides its signal: where to count what each server did. */
export interface RemoteRunOptions {
  signal?: AbortSignal;
  usage?: EndpointUsageSink;
  /** told the shown URL of the server whose answer is returned */
  answeredBy?: (server: string) => void;
}

export class HttpSandboxClient implements CodeRunner {
  /** every server's /run_code URL */
  readonly endpoints: readonly string[];
  private readonly pool: EndpointPool<string>;
  private readonly limit: ReturnType<typeof pLimit>;
  /** node:http with keep-alive sockets: Node's fetch costs several times its CPU per request */
  private readonly http: ReturnType<typeof createHttpFetch>;
  private closed = false;
  private readonly controller = new AbortController();
  /** some server answered in this run, if only with an error */
  private heard = false;
  /** the servers where an attempt found nobody (refused, unknown host, TLS, timeout), and when the first did */
  private readonly silent = new Set<string>();
  private silentSince: number | undefined;
  private silentAttempts = 0;
  /** set once no server answered within `probe_s`, or an outage stops the run: every run fails with it */
  private unreachable: UserError | undefined;
  /** since when every attempt failed, once a server had answered (undefined: the last one was answered) */
  private failingSince: number | undefined;
  private waitingSaid = false;
  /** started at the first run while no server ever answered (`watchSilence`) */
  private silenceWatched = false;

  constructor(private readonly config: SandboxConfig) {
    const urls = urlList(config.url);
    if (urls.length === 0) throw new Error("HttpSandboxClient needs sandbox.url");
    this.endpoints = urls.map((url) => `${serverBase(url)}/run_code`);
    // `workers` is per server: each replica takes as many requests as one server alone would. Unset,
    // 64, or the programs at once the servers said they take (capacity.ts), should that be more.
    const perServer = config.workers ?? Math.max(64, serverPrograms(config) ?? 0);
    this.pool = new EndpointPool(
      this.endpoints.map((url) => ({ name: `${shownServer(url)}/run_code`, target: url })),
      { capacity: perServer, balance: config.balance, log: (m) => log.warn(m) },
    );
    this.limit = pLimit(perServer * this.endpoints.length);
    this.http = createHttpFetch(perServer);
  }

  run(request: RunCodeRequest, options?: RemoteRunOptions): Promise<RunCodeResponse> {
    if (this.closed) return Promise.reject(new SandboxClosedError());
    return this.limit(() => this.send(request, options ?? {}));
  }

  /** What each server has done since this client was made, keyed by its shown URL. */
  endpointStats(): ReturnType<EndpointPool<string>["stats"]> {
    return this.pool.stats();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.controller.abort(new SandboxClosedError());
    this.http.close();
  }

  private async send(
    request: RunCodeRequest,
    { signal, usage, answeredBy }: RemoteRunOptions,
  ): Promise<RunCodeResponse> {
    if (this.unreachable) throw this.unreachable;
    if (!this.heard) this.watchSilence();
    const body = JSON.stringify(request);
    // The server may queue the request, then compile and run it: wait for both timeouts and slack.
    const budget =
      (request.compile_timeout ?? this.config.compile_timeout_s) +
      (request.run_timeout ?? this.config.run_timeout_s) +
      this.config.client_slack_s;
    let lastError: unknown = null;
    let lastUrl = this.endpoints[0]!;
    /** servers this request failed on, tried again only when no other one can take it */
    const failedOn = new Set<string>();
    const stopped = () => (signal?.aborted ? signal.reason : this.controller.signal.reason);
    // the backoff grows with every failure, also those that spend no retry (a probe, an outage)
    let failures = 0;
    for (let attempt = 0; attempt <= this.config.client_retries; attempt++) {
      const lease =
        this.pool.tryAcquire(failedOn, usage) ??
        (await this.pool.acquire(failedOn, usage, AbortSignal.any(this.stopSignals(signal)), stopped));
      const url = lease.target;
      lastUrl = url;
      const failed = async (error: unknown, outcome: "failed" | "paused", waitMs?: number) => {
        lastError = error;
        failures++;
        lease.end(outcome, waitMs);
        failedOn.add(lease.name);
        // Another server can take it now: one server's trouble is no reason for this run to wait.
        if (!this.pool.hasOther(failedOn)) await sleep(waitMs ?? backoffMs(failures - 1), signal);
      };
      let status: number;
      let text: string;
      let retryAfter: number;
      const deadline = this.deadline(signal, budget);
      try {
        const response = await this.http.fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body,
          signal: deadline.signal,
        });
        status = response.status;
        retryAfter = Number(response.headers.get("retry-after"));
        text = await response.text();
      } catch (error) {
        if (signal?.aborted || this.controller.signal.aborted) {
          lease.end("abandoned");
          // the caller's reason, as a stop in a wait or the queue gives it, not the fetch's AbortError
          throw signal?.aborted ? signal.reason : (this.unreachable ?? error);
        }
        const why = deadline.timedOut() ? new Error(`no answer within ${budget} s`) : error;
        const probeEnd = this.silence(lease.name, deadline.timedOut() || unreached(error), why);
        if (probeEnd instanceof UserError) {
          lease.end("failed");
          throw probeEnd;
        }
        // until the probe ends, or while every server is out, a run's retries are not spent
        if (probeEnd !== undefined || this.outage(why, () => lease.end("failed"))) attempt--;
        const wait =
          probeEnd === undefined
            ? undefined
            : Math.max(0, Math.min(backoffMs(failures), probeEnd - Date.now()));
        await failed(why, "failed", wait);
        continue;
      } finally {
        deadline.done();
      }
      this.heard = true;
      if (status === 429 || status >= 500) {
        const error = new SandboxRemoteError(
          `${url} answered HTTP ${status}: ${text.slice(0, 300)}`,
          url,
          status,
        );
        const waitMs = Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : undefined;
        // A 429, or a busy server's 503 with Retry-After, asks for a pause; other 5xx are failures.
        const paused = status === 429 || waitMs !== undefined;
        if (!paused && this.outage(error, () => lease.end("failed"))) attempt--;
        await failed(error, paused ? "paused" : "failed", waitMs);
        continue;
      }
      this.failingSince = undefined;
      if (this.waitingSaid) log.warn(`${lease.name} answers again`);
      this.waitingSaid = false;
      if (status >= 400) {
        lease.end("answered");
        answeredBy?.(lease.name);
        // The server refused this request (SandboxFusion answers 422 for an unknown language).
        return sandboxErrorResponse(`${url} refused the request (HTTP ${status}): ${text.slice(0, 500)}`);
      }
      try {
        const parsed = this.parse(text, url);
        lease.end("answered");
        answeredBy?.(lease.name);
        return parsed;
      } catch (error) {
        // Not a /run_code server: a wrong URL, not a busy replica; retrying would not help.
        lease.end("failed");
        throw error;
      }
    }
    const reason = lastError instanceof Error ? lastError.message : String(lastError);
    const where =
      this.endpoints.length === 1
        ? `the sandbox server at ${lastUrl}`
        : `any of the sandbox servers (${this.endpoints.join(", ")})`;
    const attempts = `${this.config.client_retries + 1} attempts`;
    const status = lastError instanceof SandboxRemoteError ? lastError.status : null;
    // A server that answered did run, or refused to: what it said is the news, not its address.
    throw new SandboxRemoteError(
      status === null
        ? `could not reach ${where} after ${attempts} (${reason}). Check that it runs (pnpm pipeline sandbox serve) and that sandbox.url is right.`
        : `${where} failed the run ${attempts} in a row; the last answer: ${reason}`,
      lastUrl,
      status,
      { cause: lastError },
    );
  }

  /**
   * Notes a failed attempt; while no server has ever answered, the time the probe ends, or (once it
   * is over with every server silent) the error that stops the run.
   */
  private silence(server: string, unanswered: boolean, error: unknown): number | UserError | undefined {
    if (!unanswered) this.heard = true;
    if (this.heard) return undefined;
    this.silent.add(server);
    this.silentAttempts++;
    this.silentSince ??= Date.now();
    const end = this.silentSince + this.config.probe_s * 1000;
    if (Date.now() < end) return end;
    if (this.silent.size < this.endpoints.length) return undefined;
    return this.failUnreachable(innermost(error));
  }

  private failUnreachable(reason: string): UserError {
    this.unreachable ??= new UserError(
      `no answer from the sandbox server at ${this.endpoints.join(", ")} in ${this.config.probe_s} s ` +
        `(${this.silentAttempts} attempts, the last: ${reason})\nCheck sandbox.url, and that the server is up ` +
        "and listening there (pnpm pipeline sandbox serve, or SandboxFusion). Nothing was recorded for the " +
        "programs in flight; rerun once it answers (sandbox.probe_s sets how long a server that never " +
        "answered is tried).",
      { exitCode: 3 },
    );
    return this.unreachable;
  }

  /**
   * Stops every run once nothing answers HTTP at the servers' addresses within probe_s while none
   * ever answered: a server that accepts and never answers would else hold each run for its whole
   * budget. A busy server answers the probe, and its runs take the time they need.
   */
  private watchSilence(): void {
    if (this.silenceWatched) return;
    this.silenceWatched = true;
    void silentFor(this.endpoints, this.config.probe_s * 1000, () => this.heard || this.closed).then(
      (silence) => {
        if (!silence || this.heard || this.closed) return;
        this.silentAttempts += silence.attempts;
        this.controller.abort(this.failUnreachable(silence.reason));
      },
    );
  }

  /**
   * Whether every server has failed for `outage_s` since one answered: then (`on_outage: wait`) a
   * run's retries are no longer spent, or (`stop`) the run stops with exit 3.
   */
  private outage(error: unknown, endLease: () => void): boolean {
    if (!this.heard) return false;
    this.failingSince ??= Date.now();
    if (Date.now() - this.failingSince < this.config.outage_s * 1000) return false;
    const since = new Date(this.failingSince).toTimeString().slice(0, 5);
    const reason = error instanceof Error ? error.message : String(error);
    if (this.config.on_outage === "stop") {
      this.unreachable ??= new UserError(
        `every sandbox server (${this.endpoints.join(", ")}) has failed since ${since} (the last: ${reason}); ` +
          "stopping, as sandbox.on_outage is stop.\nNothing was recorded for the programs in flight; rerun " +
          "once the server answers again (sandbox.on_outage: wait waits for it instead).",
        { exitCode: 3 },
      );
      endLease();
      throw this.unreachable;
    }
    if (!this.waitingSaid) {
      this.waitingSaid = true;
      log.warn(`waiting for ${this.endpoints.join(", ")} since ${since} (the last: ${reason})`);
    }
    return true;
  }

  private stopSignals(signal: AbortSignal | undefined): AbortSignal[] {
    return signal ? [this.controller.signal, signal] : [this.controller.signal];
  }

  /**
   * One attempt's signal: aborted by the caller's signal, by close(), or `budgetS` seconds on. (A
   * timer and two watchers: AbortSignal.any and AbortSignal.timeout cost more for every run.)
   */
  private deadline(signal: AbortSignal | undefined, budgetS: number) {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new DOMException(`no answer within ${budgetS} s`, "TimeoutError"));
    }, budgetS * 1000);
    const watches = this.stopSignals(signal).map((stop) => {
      if (stop.aborted) controller.abort(stop.reason);
      return onAbort(stop, () => controller.abort(stop.reason));
    });
    return {
      signal: controller.signal,
      timedOut: () => timedOut,
      done: () => {
        clearTimeout(timer);
        for (const stopWatching of watches) stopWatching();
      },
    };
  }

  private parse(text: string, url: string): RunCodeResponse {
    let value: Record<string, unknown>;
    try {
      value = JSON.parse(text) as Record<string, unknown>;
    } catch (error) {
      throw new SandboxRemoteError(
        `${url} answered something that is not JSON: ${text.slice(0, 200)}`,
        url,
        200,
        {
          cause: error,
        },
      );
    }
    if (typeof value !== "object" || value === null || !RUN_STATUSES.has(String(value.status))) {
      throw new SandboxRemoteError(
        `${url} answered JSON without a SandboxFusion status: ${text.slice(0, 200)}; is sandbox.url a /run_code server?`,
        url,
        200,
      );
    }
    return {
      ...(value as object),
      status: value.status as RunCodeResponse["status"],
      message: typeof value.message === "string" ? value.message : "",
      compile_result: asResult(value.compile_result),
      run_result: asResult(value.run_result),
      files: (value.files as Record<string, string> | undefined) ?? {},
    };
  }
}

function backoffMs(attempt: number): number {
  return Math.min(10_000, 250 * 2 ** attempt) * (0.5 + Math.random() / 2);
}
