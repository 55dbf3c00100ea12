// A role served by the embedded model: the same path as an HTTP role (response cache first,
// identical requests joined, answers committed before they are returned, usage metered), with the
// model's sequences as the concurrency limit instead of a server's. The model is fetched and loaded
// on the first request the cache cannot answer, so a fully cached rerun never touches it, and a
// machine without it stops right there, before anything is generated (ModelUnavailableError).
import pLimit, { type LimitFunction } from "p-limit";
import { UserError } from "../../errors.js";
import type { HubConfig } from "../../hub/config.js";
import type { Logger } from "../../log.js";
import type { UsageMeter } from "../../usage.js";
import { type CachedAnswer, type ResponseCache, toChatResult } from "../cache.js";
import type { RoleBackend } from "../client.js";
import { costUsd, type Price, type RoleConfig, type Sampling } from "../config.js";
import { LlmAbortedError, LlmAttemptError, LlmRequestError } from "../errors.js";
import { RequestEstimator } from "../estimator.js";
import { InFlightRequests } from "../in-flight.js";
import { EMBEDDED_HONOURS } from "../structured.js";
import type { ChatMessage, ChatOptions, ChatResult } from "../types.js";
import { type Constraint, EmbeddedEngine } from "./engine.js";
import { ensureModelFile } from "./model-file.js";
import type { EmbeddedModels } from "./runtime.js";

export interface EmbeddedRoleDeps {
  cache: ResponseCache;
  noCache: boolean;
  price: Price | undefined;
  log: Logger;
  models: EmbeddedModels;
  dataDir: string;
  hub: HubConfig;
  env: NodeJS.ProcessEnv;
  /** `provider: embedded` (true) or `auto` without an endpoint (false): only the advice differs */
  forced: boolean;
}

export class EmbeddedRole implements RoleBackend {
  readonly role: string;
  readonly model: string;
  readonly estimator: RequestEstimator;
  private readonly config: RoleConfig;
  private readonly deps: EmbeddedRoleDeps;
  private readonly limit: LimitFunction;
  private readonly inFlight = new InFlightRequests<CachedAnswer>();
  private engine: Promise<EmbeddedEngine> | undefined;
  /** why the model cannot be used (missing, unloadable): every later request fails the same way */
  private unusable: UserError | undefined;

  constructor(role: string, model: string, config: RoleConfig, deps: EmbeddedRoleDeps) {
    this.role = role;
    this.model = model;
    this.config = config;
    this.deps = deps;
    this.limit = pLimit(config.embedded.sequences);
    this.estimator = new RequestEstimator({
      role,
      model,
      sampling: config.sampling,
      price: deps.price,
      cache: () => deps.cache,
      noCache: deps.noCache,
      honours: EMBEDDED_HONOURS,
    });
  }

  async chat(
    messages: readonly ChatMessage[],
    options: ChatOptions | undefined,
    usage: UsageMeter,
  ): Promise<ChatResult> {
    if (this.unusable) throw this.unusable;
    const sampling = this.estimator.sampling(options);
    const key = this.estimator.keyOf(messages, sampling, options);
    if (!this.deps.noCache && !options?.noCache) {
      const hit = this.deps.cache.get(key);
      if (hit) {
        usage.add({ cachedRequests: 1 });
        return toChatResult(hit, true);
      }
    }
    const constraint: Constraint = { jsonSchema: options?.json_schema, grammar: options?.grammar };
    const { value, shared } = await this.inFlight.join(
      key.toString("base64"),
      options?.signal,
      (signal) => this.generate(key, messages, sampling, constraint, signal, usage),
      () => new LlmAbortedError(this.role),
    );
    if (shared) usage.add({ cachedRequests: 1 });
    return toChatResult(value, shared);
  }

  private async generate(
    key: Buffer,
    messages: readonly ChatMessage[],
    sampling: Sampling,
    constraint: Constraint,
    signal: AbortSignal,
    usage: UsageMeter,
  ): Promise<CachedAnswer> {
    // The sequence is held until the answer is on disk, as an HTTP role holds its slot.
    const answer = await this.limit(async () => {
      if (signal.aborted) throw new LlmAbortedError(this.role);
      const engine = await this.ready();
      if (signal.aborted) throw new LlmAbortedError(this.role);
      usage.add({ requests: 1 });
      let generated: CachedAnswer;
      try {
        generated = await engine.generate(messages, sampling, constraint, signal);
      } catch (error) {
        if (error instanceof LlmAbortedError) throw error;
        usage.add({ failedRequests: 1 });
        // A local failure repeats when retried at once (the same prompt, the same model): the record
        // fails and is retried on the next run, like an HTTP request that used up its retries.
        if (error instanceof LlmAttemptError) throw new LlmRequestError(this.role, 1, error);
        throw error;
      }
      await this.deps.cache.putSoon(key, generated);
      return generated;
    });
    usage.add({
      promptTokens: answer.promptTokens,
      completionTokens: answer.completionTokens,
      costUsd: costUsd(this.deps.price, answer.promptTokens, answer.completionTokens),
    });
    return answer;
  }

  /** The engine, fetching and loading the model on first use; a failure stops every later request. */
  private ready(): Promise<EmbeddedEngine> {
    // requests queued behind the one that found the model missing fail at once, without asking again
    if (this.unusable) return Promise.reject(this.unusable);
    this.engine ??= this.load().catch((error: unknown) => {
      if (error instanceof UserError) this.unusable = error;
      this.engine = undefined;
      throw error;
    });
    return this.engine;
  }

  private async load(): Promise<EmbeddedEngine> {
    const embedded = this.config.embedded;
    const { dataDir, hub, env, log, forced } = this.deps;
    const file = await ensureModelFile(embedded, {
      role: this.role,
      forced,
      baseUrlEnv: this.config.base_url_env,
      dataDir,
      hub,
      env,
      log,
    });
    const loaded = await this.deps.models.load(file, embedded);
    let engine: EmbeddedEngine;
    try {
      engine = await EmbeddedEngine.create(this.role, this.model, loaded, embedded);
    } catch (error) {
      throw new UserError(
        `llm role '${this.role}': could not make a context of ${embedded.sequences} sequences of ` +
          `${embedded.context_size} tokens for ${this.model}: ${error instanceof Error ? error.message : String(error)}. ` +
          `Lower llm.${this.role}.embedded.sequences or context_size.`,
        { cause: error },
      );
    }
    log.info(
      `llm role '${this.role}': embedded model ${this.model} on ${engine.device} ` +
        `(${engine.sequences} sequences of ${engine.contextSize} tokens; ${file})`,
    );
    return engine;
  }

  async close(): Promise<void> {
    const engine = this.engine;
    this.engine = undefined;
    if (engine) await (await engine.catch(() => undefined))?.close();
  }
}
