// The LLM service: `client(role, usage)` for stages, built lazily so a run that needs no LLM never
// opens the cache or asks for an endpoint. See docs/llm.md.
import { existsSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { type HubConfig, hubConfigSchema } from "../hub/config.js";
import type { Logger } from "../log.js";
import type { UsageMeter } from "../usage.js";
import { BatchRole } from "./batch/role.js";
import { LlmBatches } from "./batch/rounds.js";
import { type CacheShard, openResponseCache, type ResponseCache, shardCachePath } from "./cache.js";
import type { RoleBackend } from "./cached-call.js";
import { RoleEndpoint } from "./client.js";
import { type LlmConfig, priceOf, ROLE_NAMES, roleConfig } from "./config.js";
import { EmbeddedRole } from "./embedded/role.js";
import { EmbeddedModels } from "./embedded/runtime.js";
import { type Env, resolveEndpoint } from "./endpoint.js";
import { RequestEstimator } from "./estimator.js";
import { chooseProvider, describeProvider } from "./provider.js";
import { EMBEDDED_HONOURS, OPENAI_HONOURS } from "./structured.js";
import type { LlmClient, LlmEstimator } from "./types.js";

export interface LlmServiceOptions {
  dataDir: string;
  /** `--no-cache`: never answer from the cache (fresh answers still replace the stored ones) */
  noCache: boolean;
  log: Logger;
  /** defaults to process.env */
  env?: Env;
  /** where the embedded provider fetches its GGUF files from (the root config's `hub:`) */
  hub?: HubConfig;
  /** `run --shard K/N`: the cache goes to a file of this shard's own (see `openResponseCache`) */
  shard?: CacheShard;
  /** `run --no-wait`: batch roles submit their rounds and the run stops instead of waiting for them */
  noWait?: boolean;
}

export interface LlmService {
  /**
   * The role's client, on the provider it resolves to (provider.ts). Throws NotConfiguredError
   * (with the recipe) when an OpenAI-compatible role has no endpoint or no key; an embedded role's
   * model is fetched and loaded on its first request the cache cannot answer.
   */
  client(role: string, usage: UsageMeter): LlmClient;
  /**
   * For `run --dry-run`: estimates from the role's config and the response cache, with or without
   * an endpoint. Creates no cache file; a missing one means nothing is answered yet.
   */
  estimator(role: string): LlmEstimator;
  /** One line per role: which provider and model it resolves to, and where that is. */
  describeRoles(): string[];
  /** the batch rounds of the roles in batch mode (`llm.<role>.batch`); undefined when every role is online */
  batches(): LlmBatches | undefined;
  close(): Promise<void>;
}

export function cachePath(config: LlmConfig, dataDir: string): string {
  return isAbsolute(config.cache.path) ? config.cache.path : join(dataDir, config.cache.path);
}

export function createLlmService(config: LlmConfig, options: LlmServiceOptions): LlmService {
  let cache: ResponseCache | undefined;
  let models: EmbeddedModels | undefined;
  const endpoints = new Map<string, RoleBackend>();
  const env = options.env ?? process.env;
  const path = cachePath(config, options.dataDir);
  const open = () => openResponseCache(path, options.shard);
  // A dry-run reads the cache if there is one, and creates none.
  const existingCache = () => {
    const own = options.shard ? shardCachePath(path, options.shard) : path;
    if (!cache && (existsSync(own) || existsSync(path))) cache = open();
    return cache;
  };
  let rounds: LlmBatches | undefined;
  const batches = () => {
    if (!rounds && ROLE_NAMES.some((role) => config[role].batch)) {
      rounds = new LlmBatches(config, {
        cache: () => (cache ??= open()),
        log: options.log,
        noWait: options.noWait === true,
        env,
      });
    }
    return rounds;
  };
  return {
    client(role, usage) {
      let endpoint = endpoints.get(role);
      if (!endpoint) {
        const choice = chooseProvider(config, role, env);
        const batch = choice.config.batch;
        // the endpoint (and its key) is checked before anything is sent; the embedded model and
        // `files` batches need none
        const online = batch ? batch.provider === "openai" : choice.provider === "openai";
        const resolved = online ? resolveEndpoint(config, role, env) : undefined;
        cache ??= open();
        const model = batch ? choice.config.model : choice.model;
        const shared = { cache, noCache: options.noCache, price: priceOf(config, model), log: options.log };
        if (batch) {
          endpoint = new BatchRole(role, choice.config, { ...shared, rounds: batches()! });
        } else if (resolved) {
          endpoint = new RoleEndpoint(resolved, shared);
        } else {
          models ??= new EmbeddedModels(options.log);
          endpoint = new EmbeddedRole(role, choice.model, choice.config, {
            ...shared,
            models,
            dataDir: options.dataDir,
            hub: options.hub ?? hubConfigSchema.parse({}),
            env: env as NodeJS.ProcessEnv,
            forced: choice.forced,
          });
        }
        endpoints.set(role, endpoint);
      }
      // the role's limits and cache, shared by every stage; the usage is this stage's
      const backend = endpoint;
      return { role, model: backend.model, chat: (messages, o) => backend.chat(messages, o, usage) };
    },
    estimator(role) {
      const endpoint = endpoints.get(role);
      if (endpoint) return endpoint.estimator;
      const choice = chooseProvider(config, role, env);
      return new RequestEstimator({
        role,
        model: choice.model,
        sampling: choice.config.sampling,
        price: priceOf(config, choice.model),
        cache: existingCache,
        noCache: options.noCache,
        honours: choice.provider === "embedded" ? EMBEDDED_HONOURS : OPENAI_HONOURS,
        batchDiscount: roleConfig(config, role)?.batch?.discount,
      });
    },
    describeRoles() {
      return ROLE_NAMES.map((role) => describeProvider(config, role, env, options.dataDir));
    },
    batches,
    async close() {
      const closing = [...endpoints.values()].map((endpoint) => endpoint.close());
      endpoints.clear();
      await Promise.all(closing);
      await models?.close();
      models = undefined;
      cache?.close();
      cache = undefined;
    },
  };
}

export { ModelUnavailableError } from "./embedded/model-file.js";
export { LlmAbortedError, LlmAuthError, LlmRequestError } from "./errors.js";
export { loadPrompt, type PromptTemplate } from "./prompts.js";
export { chooseProvider, describeProvider, type ProviderChoice } from "./provider.js";
export type {
  ChatMessage,
  ChatOptions,
  ChatResult,
  JsonSchemaFormat,
  LlmClient,
  LlmEstimator,
  RequestEstimate,
} from "./types.js";
