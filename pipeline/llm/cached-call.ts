// The path every request to a role takes, whatever serves it (an OpenAI-compatible endpoint,
// client.ts, or the embedded model, embedded/role.ts): the response cache first, identical requests
// in flight joined, and a new answer committed to the cache before its slot is freed and before it
// is returned and metered. A backend says only how one answer is produced.
import type { LimitFunction } from "p-limit";
import type { UsageMeter } from "../usage.js";
import { type CachedAnswer, type ResponseCache, toChatResult } from "./cache.js";
import { costUsd, type Sampling } from "./config.js";
import { LlmAbortedError } from "./errors.js";
import { type EstimatorOptions, RequestEstimator } from "./estimator.js";
import { InFlightRequests } from "./in-flight.js";
import type { ChatMessage, ChatOptions, ChatResult } from "./types.js";

/** One request the cache could not answer, as its backend gets it. */
export interface UncachedCall {
  key: Buffer;
  messages: readonly ChatMessage[];
  /** the role's sampling with the call's overrides: what is sent */
  sampling: Sampling;
  options: ChatOptions | undefined;
  /** fires once every caller of this request (identical ones joined) has given up */
  signal: AbortSignal;
  usage: UsageMeter;
}

/** The estimator's options, with the cache itself (a backend has one from the start). */
export type CachedCallsOptions = Omit<EstimatorOptions, "cache"> & { cache: ResponseCache };

export class CachedCalls {
  /** sampling, cache keys and estimates, shared with `run --dry-run` */
  readonly estimator: RequestEstimator;
  private readonly options: CachedCallsOptions;
  /** identical requests in flight at once are sent once */
  private readonly inFlight = new InFlightRequests<CachedAnswer>();
  /** answers being produced or waiting for a slot, whether or not anyone still waits for them */
  private readonly producing = new Set<Promise<unknown>>();

  constructor(options: CachedCallsOptions) {
    this.options = options;
    this.estimator = new RequestEstimator({ ...options, cache: () => options.cache });
  }

  /** The cached answer, the one an identical request in flight gets, or a new one from `send`. */
  async chat(
    messages: readonly ChatMessage[],
    options: ChatOptions | undefined,
    usage: UsageMeter,
    send: (call: UncachedCall) => Promise<CachedAnswer>,
  ): Promise<ChatResult> {
    const sampling = this.estimator.sampling(options);
    const key = this.estimator.keyOf(messages, sampling, options);
    if (!this.options.noCache && !options?.noCache) {
      const hit = this.options.cache.get(key);
      if (hit) {
        usage.add({ cachedRequests: 1 });
        return toChatResult(hit, true);
      }
    }
    const { value, shared } = await this.inFlight.join(
      key.toString("base64"),
      options?.signal,
      (signal) => send({ key, messages, sampling, options, signal, usage }),
      () => new LlmAbortedError(this.options.role),
    );
    // Answered by an identical request someone else sent: nothing was sent for this call.
    if (shared) usage.add({ cachedRequests: 1 });
    return toChatResult(value, shared);
  }

  /**
   * Once every answer on its way has been committed or has failed: a request already sent is paid
   * for, so a run that stops (a first Ctrl-C) keeps its answer rather than cutting it off and paying
   * for it again on the rerun. Those not sent yet are not sent once their callers have given up.
   */
  async settled(): Promise<void> {
    while (this.producing.size > 0) await Promise.allSettled([...this.producing]);
  }

  /**
   * Produces one answer under `limit` and keeps the slot until the answer is on disk, so at most the
   * limit's requests are ever paid for and unanswered, and the answer is committed before the
   * caller (then the stage's record) sees it: a kill -9 at any instant costs at most those requests.
   * Its tokens and cost are metered once it is committed.
   */
  async commit(
    limit: LimitFunction,
    call: UncachedCall,
    produce: () => Promise<CachedAnswer>,
  ): Promise<CachedAnswer> {
    const running = limit(async () => {
      const produced = await produce();
      await this.options.cache.putSoon(call.key, produced);
      return produced;
    });
    this.producing.add(running);
    const answer = await running.finally(() => this.producing.delete(running));
    call.usage.add({
      promptTokens: answer.promptTokens,
      completionTokens: answer.completionTokens,
      costUsd: costUsd(this.options.price, answer.promptTokens, answer.completionTokens),
    });
    return answer;
  }
}

/**
 * What serves one role (an OpenAI-compatible endpoint, the embedded model, or a batch role) on the
 * shared path: it says how one answer is produced (`answer`, which commits it through
 * `calls.commit`) and, once it can answer nothing more, why (`unusable`).
 */
export abstract class RoleBackend<Refusal extends Error = Error> {
  readonly role: string;
  readonly model: string;
  protected readonly calls: CachedCalls;
  /** why nothing more can be answered (a refused key, a missing model): every later request fails so */
  protected unusable: Refusal | undefined;

  constructor(options: CachedCallsOptions) {
    this.role = options.role;
    this.model = options.model;
    this.calls = new CachedCalls(options);
  }

  /** sampling, cache keys and estimates, shared with `run --dry-run` */
  get estimator(): RequestEstimator {
    return this.calls.estimator;
  }

  async chat(
    messages: readonly ChatMessage[],
    options: ChatOptions | undefined,
    usage: UsageMeter,
  ): Promise<ChatResult> {
    if (this.unusable) throw this.unusable;
    return this.calls.chat(messages, options, usage, (call) => this.answer(call));
  }

  protected abstract answer(call: UncachedCall): Promise<CachedAnswer>;

  abstract close(): void | Promise<void>;
}
