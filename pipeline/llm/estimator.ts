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

export interface EstimatorOptions {
  role: string;
  model: string;
  sampling: Sampling;
  price: Price | undefined;
  /** the response cache; undefined while there is no cache file, so nothing is answered yet */
  cache: () => ResponseCache | undefined;
  /** `--no-cache`: every request would be sent again */
  noCache: boolean;
  /** which structured-output constraints the provider honours (in its cache keys); default: OpenAI's */
  honours?: HonouredConstraints | undefined;
  /** the role's batch discount, for `run --dry-run` */
  batchDiscount?: number | undefined;
}

export class RequestEstimator implements LlmEstimator {
  readonly role: string;
  readonly model: string;
  readonly batchDiscount: number | undefined;
  private readonly options: EstimatorOptions;

  constructor(options: EstimatorOptions) {
    this.options = options;
    this.role = options.role;
    this.model = options.model;
    this.batchDiscount = options.batchDiscount;
  }

  /** The role's sampling with a call's overrides: what is sent, and part of the cache key. */
  sampling(options: ChatOptions | undefined): Sampling {
    const s: Sampling = { ...this.options.sampling };
    if (options?.temperature !== undefined) s.temperature = options.temperature;
    if (options?.top_p !== undefined) s.top_p = options.top_p;
    if (options?.max_tokens !== undefined) s.max_tokens = options.max_tokens;
    if (options?.seed !== undefined) s.seed = options.seed;
    return s;
  }

  get priced(): boolean {
    return this.options.price !== undefined;
  }

  key(messages: readonly ChatMessage[], options: ChatOptions | undefined): Buffer {
    return this.keyOf(messages, this.sampling(options), options);
  }

  /** The key of a request whose sampling is already worked out. */
  keyOf(messages: readonly ChatMessage[], sampling: Sampling, options: ChatOptions | undefined): Buffer {
    return cacheKey(
      this.model,
      messages,
      sampling,
      constraintKey(options, this.options.honours ?? OPENAI_HONOURS),
    );
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
      costUsd: costUsd(this.options.price, promptTokens, completionTokens),
    };
  }

  peek(messages: readonly ChatMessage[], options?: ChatOptions): ChatResult | undefined {
    const hit = this.readable()?.get(this.key(messages, options));
    return hit ? toChatResult(hit, true) : undefined;
  }

  private readable(): ResponseCache | undefined {
    return this.options.noCache ? undefined : this.options.cache();
  }
}
