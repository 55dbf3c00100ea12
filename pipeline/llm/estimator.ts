// What requests to a role would cost, and which of them are already answered, from the config and
// the response cache alone: the cache key is model + messages + sampling, all known without an
// endpoint, so `run --dry-run` can tell what is cached before any server is configured.
import { cacheKey, type ResponseCache, toChatResult } from "./cache.js";
import { costUsd, type Price, type Sampling } from "./config.js";
import { constraintKey, type HonouredConstraints, OPENAI_HONOURS } from "./structured.js";
import { estimatePromptTokens } from "./tokens.js";
import type { ChatMessage, ChatOptions, ChatResult, LlmEstimator, RequestEstimate } from "./types.js";

/** An answer length to assume when neither the caller nor `max_tokens` says. */
export const DEFAULT_COMPLETION_TOKENS = 256;

export class RequestEstimator implements LlmEstimator {
  readonly role: string;
  readonly model: string;
  private readonly baseSampling: Sampling;
  private readonly price: Price | undefined;
  /** the response cache; undefined while there is no cache file, so nothing is answered yet */
  private readonly cache: () => ResponseCache | undefined;
  /** `--no-cache`: every request would be sent again */
  private readonly noCache: boolean;
  /** which structured-output constraints the role's provider honours (they are in its cache keys) */
  private readonly honours: HonouredConstraints;
  readonly batchDiscount: number | undefined;

  constructor(options: {
    role: string;
    model: string;
    sampling: Sampling;
    price: Price | undefined;
    cache: () => ResponseCache | undefined;
    noCache: boolean;
    /** default: an OpenAI-compatible server's */
    honours?: HonouredConstraints;
    batchDiscount?: number | undefined;
  }) {
    this.batchDiscount = options.batchDiscount;
    this.role = options.role;
    this.model = options.model;
    this.baseSampling = options.sampling;
    this.price = options.price;
    this.cache = options.cache;
    this.noCache = options.noCache;
    this.honours = options.honours ?? OPENAI_HONOURS;
  }

  /** The role's sampling with a call's overrides: what is sent, and part of the cache key. */
  sampling(options: ChatOptions | undefined): Sampling {
    const s: Sampling = { ...this.baseSampling };
    if (options?.temperature !== undefined) s.temperature = options.temperature;
    if (options?.top_p !== undefined) s.top_p = options.top_p;
    if (options?.max_tokens !== undefined) s.max_tokens = options.max_tokens;
    if (options?.seed !== undefined) s.seed = options.seed;
    return s;
  }

  get priced(): boolean {
    return this.price !== undefined;
  }

  key(messages: readonly ChatMessage[], options: ChatOptions | undefined): Buffer {
    return this.keyOf(messages, this.sampling(options), options);
  }

  /** The key of a request whose sampling is already worked out. */
  keyOf(messages: readonly ChatMessage[], sampling: Sampling, options: ChatOptions | undefined): Buffer {
    return cacheKey(this.model, messages, sampling, constraintKey(options, this.honours));
  }

  estimate(messages: readonly ChatMessage[], options?: ChatOptions): RequestEstimate {
    const sampling = this.sampling(options);
    if (this.readable()?.has(this.keyOf(messages, sampling, options))) {
      return { cached: true, promptTokens: 0, completionTokens: 0, costUsd: 0 };
    }
    const promptTokens = estimatePromptTokens(messages);
    const completionTokens = Math.min(
      options?.expectedCompletionTokens ?? sampling.max_tokens ?? DEFAULT_COMPLETION_TOKENS,
      sampling.max_tokens ?? Number.POSITIVE_INFINITY,
    );
    return {
      cached: false,
      promptTokens,
      completionTokens,
      costUsd: costUsd(this.price, promptTokens, completionTokens),
    };
  }

  peek(messages: readonly ChatMessage[], options?: ChatOptions): ChatResult | undefined {
    const hit = this.readable()?.get(this.key(messages, options));
    return hit ? toChatResult(hit, true) : undefined;
  }

  private readable(): ResponseCache | undefined {
    return this.noCache ? undefined : this.cache();
  }
}
