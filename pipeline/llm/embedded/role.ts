// A role served by the embedded model: the same path as an HTTP role (cached-call.ts: cache first,
// identical requests joined, answers committed before they are returned, usage metered), with the
// model's sequences as the concurrency limit instead of a server's. The model is fetched and loaded
// on the first request the cache cannot answer, so a fully cached rerun never touches it, and a
// machine without it stops right there, before anything is generated (ModelUnavailableError).
import pLimit, { type LimitFunction } from "p-limit";
import { UserError } from "../../errors.js";
import type { HubConfig } from "../../hub/config.js";
import type { Logger } from "../../log.js";
import type { CachedAnswer } from "../cache.js";
import { type CachedCallsOptions, RoleBackend, type UncachedCall } from "../cached-call.js";
import type { RoleConfig } from "../config.js";
import { LlmAbortedError, LlmAttemptError, LlmRequestError } from "../errors.js";
import { EMBEDDED_HONOURS } from "../structured.js";
import { type Constraint, EmbeddedEngine } from "./engine.js";
import { ensureModelFile } from "./model-file.js";
import type { EmbeddedModels } from "./runtime.js";

export interface EmbeddedRoleDeps extends Pick<CachedCallsOptions, "cache" | "noCache" | "price"> {
  log: Logger;
  models: EmbeddedModels;
  dataDir: string;
  hub: HubConfig;
  env: NodeJS.ProcessEnv;
  /** `provider: embedded` (true) or `auto` without an endpoint (false): only the advice differs */
  forced: boolean;
}

export class EmbeddedRole extends RoleBackend<UserError> {
  private readonly config: RoleConfig;
  private readonly deps: EmbeddedRoleDeps;
  private readonly limit: LimitFunction;
  private engine: Promise<EmbeddedEngine> | undefined;
  // `unusable` (from RoleBackend) is set when the model is missing or cannot be loaded.

  constructor(role: string, model: string, config: RoleConfig, deps: EmbeddedRoleDeps) {
    super({ role, model, sampling: config.sampling, ...deps, honours: EMBEDDED_HONOURS });
    this.config = config;
    this.deps = deps;
    this.limit = pLimit(config.embedded.sequences);
  }

  protected answer(call: UncachedCall): Promise<CachedAnswer> {
    const { messages, sampling, signal, usage } = call;
    const constraint: Constraint = { jsonSchema: call.options?.json_schema, grammar: call.options?.grammar };
    // The sequence is held until the answer is on disk, as an HTTP role holds its slot.
    return this.calls.commit(this.limit, call, async () => {
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
      return generated;
    });
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
    const context = { ...this.deps, role: this.role, baseUrlEnv: this.config.base_url_env };
    const file = await ensureModelFile(embedded, context);
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
    this.deps.log.info(
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
