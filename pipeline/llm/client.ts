// An OpenAI-compatible role's backend (RoleEndpoint): cache first (cached-call.ts), then the endpoint
// under its concurrency limit and budgets, with retries. One `RoleEndpoint` per role is shared by every client
// of that role, so two stages (or two meters) never exceed the role's concurrency together. A role with several
// replicas spreads its requests over them (balance/pool.ts); a request that fails on one goes to
// another at once.
import type OpenAI from "openai";
import pLimit, { type LimitFunction } from "p-limit";
import { sleep } from "../abort.js";
import { EndpointPool, type LeaseOutcome } from "../balance/pool.js";
import { createHttpFetch } from "../http-fetch.js";
import { silentFor } from "../liveness.js";
import type { Logger } from "../log.js";
import { AuthRefusedError, attemptChat, createSdkClient } from "./attempt.js";
import { backoffMs, MAX_SERVER_WAIT_MS } from "./backoff.js";
import { MinuteBudget } from "./budget.js";
import type { CachedAnswer, ResponseCache } from "./cache.js";
import { RoleBackend, type UncachedCall } from "./cached-call.js";
import type { Price } from "./config.js";
import type { Endpoint } from "./endpoint.js";
import {
  clock,
  LlmAbortedError,
  LlmAttemptError,
  LlmAuthError,
  LlmNotFoundError,
  LlmOutageError,
  LlmRequestError,
  LlmUnreachableError,
} from "./errors.js";
import { DEFAULT_COMPLETION_TOKENS } from "./estimator.js";
import { FailureDigest } from "./failure-digest.js";
import { responseFormat } from "./structured.js";
import { estimatePromptTokens, estimateTextTokens } from "./tokens.js";

type Refusal = LlmAuthError | LlmNotFoundError | LlmUnreachableError | LlmOutageError;

/** What is shared by all clients of one role: the connection, the limits, the cache. */
export class RoleEndpoint extends RoleBackend<Refusal> {
  readonly endpoint: Endpoint;
  readonly price: Price | undefined;
  readonly log: Logger;
  /** the role's servers, one SDK client each */
  private readonly pool: EndpointPool<OpenAI>;
  private readonly http: ReturnType<typeof createHttpFetch>;
  private readonly limit: LimitFunction;
  private readonly requestBudget: MinuteBudget | undefined;
  private readonly tokenBudget: MinuteBudget | undefined;
  private readonly digest: FailureDigest;
  private warnedNoPrice = false;
  /** some server of the role answered in this run, if only with an error */
  private heard = false;
  /** the servers where an attempt found nobody (refused, unknown host, TLS, timeout), and when the first did */
  private readonly silent = new Set<string>();
  private silentSince: number | undefined;
  private silentAttempts = 0;
  /** since when every attempt at a server failed (undefined: the last one was answered) */
  private failingSince: number | undefined;
  private waitingSaid = false;
  /** rejects when nothing at the role's addresses answers HTTP within probe_s, while none ever answered */
  private silence: Promise<never> | undefined;
  // `unusable` (from RoleBackend) is set by a 401/403/404, or when no server ever answered or an
  // outage stops the run (`on_outage: stop`): nothing more is sent.

  constructor(
    endpoint: Endpoint,
    deps: { cache: ResponseCache; noCache: boolean; price: Price | undefined; log: Logger },
  ) {
    super({ role: endpoint.role, model: endpoint.config.model, sampling: endpoint.config.sampling, ...deps });
    this.endpoint = endpoint;
    this.price = deps.price;
    this.log = deps.log;
    const rc = endpoint.config;
    const role = endpoint.role;
    // One agent for every replica: its socket limit is per host and port, so per replica.
    this.http = createHttpFetch(rc.concurrency);
    this.pool = new EndpointPool(
      endpoint.replicas.map((replica) => ({
        name: replica.shownUrl,
        target: createSdkClient(replica.baseUrl, endpoint.apiKey, this.http.fetch),
      })),
      {
        capacity: rc.concurrency,
        balance: rc.balance,
        log: (m) => deps.log.warn(`llm role '${role}': ${m}`),
      },
    );
    this.limit = pLimit(rc.concurrency * endpoint.replicas.length);
    if (rc.requests_per_minute) this.requestBudget = new MinuteBudget(rc.requests_per_minute, { role });
    if (rc.tokens_per_minute) this.tokenBudget = new MinuteBudget(rc.tokens_per_minute, { role });
    this.digest = new FailureDigest(role, deps.log);
  }

  protected async answer(call: UncachedCall): Promise<CachedAnswer> {
    const rc = this.endpoint.config;
    const maxAttempts = rc.retries + 1;
    /** the replicas this request failed on, tried again only when no other one can take it */
    const failedOn = new Set<string>();
    // Counted only when needed: for the tokens/min budget, or for a server that reports no usage.
    let estimatedPrompt = -1;
    const promptEstimate = () => {
      if (estimatedPrompt < 0) estimatedPrompt = estimatePromptTokens(call.messages);
      return estimatedPrompt;
    };
    /** attempts that spent the request's retries: not those made while probing or waiting out an outage */
    let spent = 0;
    for (let attempt = 1; ; attempt++) {
      let failure: LlmAttemptError;
      try {
        // At most `concurrency` requests are ever sent and unanswered (CachedCalls.commit).
        const cached = await this.calls.commit(this.limit, call, () =>
          this.sendOnce(call, promptEstimate, failedOn),
        );
        this.noteMissingPrice();
        return cached;
      } catch (error) {
        if (!(error instanceof LlmAttemptError)) throw error;
        failure = error;
      }
      this.digest.note(failure.kind);
      // No server has ever answered: a wrong address or one not up, which no record's retry fixes.
      const probeEnd =
        this.heard || this.silentSince === undefined ? undefined : this.silentSince + rc.probe_s * 1000;
      if (
        probeEnd !== undefined &&
        Date.now() >= probeEnd &&
        this.silent.size === this.endpoint.replicas.length
      ) {
        throw this.refuse(new LlmUnreachableError(this.endpoint, this.silentAttempts, failure));
      }
      // Until the probe ends a record's retries are not spent, so none is marked failed for it.
      const probing = probeEnd !== undefined && Date.now() < probeEnd;
      // Every server failing for outage_s: no retry of a record's can help, only the server's return.
      const outage =
        this.heard &&
        failure.retryable &&
        this.failingSince !== undefined &&
        Date.now() - this.failingSince >= rc.outage_s * 1000;
      if (outage && rc.on_outage === "stop") {
        throw this.refuse(new LlmOutageError(this.endpoint, new Date(this.failingSince!), failure));
      }
      if (outage && !this.waitingSaid) {
        this.waitingSaid = true;
        const urls = this.endpoint.replicas.map((r) => r.shownUrl).join(", ");
        this.log.warn(
          `llm role '${this.endpoint.role}': waiting for ${urls} since ${clock(new Date(this.failingSince!))}` +
            ` (every attempt failed; the last: ${failure.kind}); no record is marked failed meanwhile`,
        );
      }
      if (!probing && !outage) spent++;
      if (!failure.retryable || spent >= maxAttempts) {
        throw new LlmRequestError(this.endpoint.role, attempt, failure);
      }
      // Another replica can take it now: one server's trouble is no reason for this request to wait.
      if (failedOn.size > 0 && this.pool.hasOther(failedOn)) continue;
      const backoff = backoffMs(attempt, {
        baseMs: rc.backoff_s * 1000,
        maxMs: rc.max_backoff_s * 1000,
        retryAfterMs: failure.retryAfterMs,
      });
      const wait = probing ? Math.max(0, Math.min(backoff, probeEnd - Date.now())) : backoff;
      await sleep(wait, call.signal, () => new LlmAbortedError(this.endpoint.role));
    }
  }

  /** One attempt; the token counts a server left out are estimated, so the meter and cache have numbers. */
  private async sendOnce(
    call: UncachedCall,
    promptEstimate: () => number,
    failedOn: Set<string>,
  ): Promise<CachedAnswer> {
    const { messages, sampling, signal, usage } = call;
    const jsonSchema = call.options?.json_schema;
    if (this.unusable) throw this.unusable;
    if (signal?.aborted) throw new LlmAbortedError(this.endpoint.role);
    // (Each wait is awaited only when there is one: a thousand requests a second pay for every
    // promise on this path.)
    if (this.requestBudget) await this.requestBudget.take(1, signal);
    // Reserved: the prompt and the longest answer allowed; corrected once the server says.
    const tokenCharge = this.tokenBudget
      ? promptEstimate() + (sampling.max_tokens ?? DEFAULT_COMPLETION_TOKENS)
      : 0;
    if (this.tokenBudget) await this.tokenBudget.take(tokenCharge, signal);
    // Waits only while every replica is paused (429), out of rotation or full.
    const lease =
      this.pool.tryAcquire(failedOn, usage) ??
      (await this.pool.acquire(failedOn, usage, signal, () => new LlmAbortedError(this.endpoint.role)));
    if (this.unusable) {
      lease.end("abandoned");
      throw this.unusable;
    }
    usage.add({ requests: 1 });
    try {
      const answer = await this.unlessSilent(
        attemptChat(
          lease.target,
          {
            model: this.model,
            messages,
            sampling,
            stream: this.endpoint.config.stream,
            ...(jsonSchema ? { responseFormat: responseFormat(jsonSchema) } : {}),
            // whole milliseconds, at least one: the SDK refuses anything else
            timeoutMs: Math.max(1, Math.round(this.endpoint.config.timeout_s * 1000)),
          },
          this.endpoint.apiKey,
        ),
      );
      lease.end("answered");
      this.heard = true;
      if (this.waitingSaid) this.log.warn(`llm role '${this.endpoint.role}': ${lease.name} answers again`);
      this.failingSince = undefined;
      this.waitingSaid = false;
      if (this.tokenBudget && answer.promptTokens !== undefined && answer.completionTokens !== undefined) {
        this.tokenBudget.adjust(tokenCharge - answer.promptTokens - answer.completionTokens);
      }
      return {
        ...answer,
        promptTokens: answer.promptTokens ?? promptEstimate(),
        completionTokens: answer.completionTokens ?? estimateTextTokens(answer.content),
      };
    } catch (error) {
      usage.add({ failedRequests: 1 });
      // Ended while this request still holds its slot: the next one in line already sees a pause
      // or an ejection. The server's pause is capped like the request's own backoff.
      const outcome = leaseOutcome(error);
      const pause =
        error instanceof LlmAttemptError && error.retryAfterMs !== undefined
          ? Math.min(error.retryAfterMs, MAX_SERVER_WAIT_MS)
          : undefined;
      lease.end(outcome, pause);
      if (outcome === "failed" || outcome === "paused") failedOn.add(lease.name);
      if (outcome === "failed") this.failingSince ??= Date.now();
      if (error instanceof LlmAttemptError && error.unanswered) {
        this.silent.add(lease.name);
        this.silentAttempts++;
        this.silentSince ??= Date.now();
      } else if (outcome !== "abandoned") {
        this.heard = true;
      }
      // Marked while this request still holds its slot: the next one in line already sees it.
      if (error instanceof AuthRefusedError) {
        throw this.refuse(new LlmAuthError(this.endpoint, error.status, error.message));
      }
      if (error instanceof LlmAttemptError && error.kind === "not-found") {
        throw this.refuse(new LlmNotFoundError(this.endpoint, error.message));
      }
      throw error;
    }
  }

  /**
   * `attempt`, or the role's end once nothing answers HTTP at its addresses within probe_s while no
   * server ever answered: a server that accepts and never answers would else hold every attempt for
   * its whole timeout. A slow server answers the probe, and its requests take the time they need.
   */
  private unlessSilent<T>(attempt: Promise<T>): Promise<T> {
    if (this.heard) return attempt;
    const urls = this.endpoint.replicas.map((r) => `${r.baseUrl}/models`);
    this.silence ??= silentFor(urls, this.endpoint.config.probe_s * 1000, () => this.heard).then(
      (silence) => {
        if (!silence || this.heard) return new Promise<never>(() => {});
        this.silentAttempts += silence.attempts;
        const last = new LlmAttemptError("timeout", silence.reason);
        throw this.refuse(new LlmUnreachableError(this.endpoint, this.silentAttempts, last));
      },
    );
    return Promise.race([attempt, this.silence]);
  }

  /** The role answers nothing more: every later request fails with the first refusal. */
  private refuse(error: Refusal): Refusal {
    this.unusable ??= error;
    return this.unusable;
  }

  private noteMissingPrice(): void {
    if (this.price || this.warnedNoPrice) return;
    this.warnedNoPrice = true;
    this.log.debug(
      `llm role '${this.endpoint.role}': no price for model ${this.model} in llm.prices; its cost counts as 0`,
    );
  }

  async close(): Promise<void> {
    // those holding a slot were sent (or are about to be); the queued ones give up unsent
    if (this.limit.activeCount > 0) {
      this.log.info(
        `llm role '${this.endpoint.role}': waiting for ${this.limit.activeCount} request(s) in flight, so their answers are kept`,
      );
    }
    await this.calls.settled();
    this.digest.flush();
    this.http.close();
  }
}

/**
 * What a failed attempt says about the replica it went to: a 429 (or a 5xx with Retry-After) is the
 * server asking for a pause (of itself only, for as long as its Retry-After says); connection errors, 5xx, timeouts and
 * unreadable answers count towards taking it out of rotation; anything else (a 4xx about the request,
 * a refused key) came from a working server.
 */
function leaseOutcome(error: unknown): LeaseOutcome {
  if (error instanceof AuthRefusedError) return "answered";
  if (!(error instanceof LlmAttemptError)) return "abandoned";
  switch (error.kind) {
    case "rate-limited":
      return "paused";
    case "server-error":
      // A 503 with Retry-After is a busy server saying when to come back, not a broken one.
      return error.retryAfterMs === undefined ? "failed" : "paused";
    case "connection":
    case "timeout":
    case "malformed-response":
      return "failed";
    default:
      return "answered";
  }
}
