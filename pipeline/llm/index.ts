// The LLM service: `client(role, usage)` for stages, built lazily so a run that needs no LLM never
// opens the cache or asks for an endpoint. See docs/llm.md.
import { existsSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import type { Logger } from "../log.js";
import type { UsageMeter } from "../usage.js";
import { ResponseCache } from "./cache.js";
import { ChatClient, RoleEndpoint } from "./client.js";
import { type LlmConfig, priceOf } from "./config.js";
import { type Env, requireRole, resolveEndpoint } from "./endpoint.js";
import { RequestEstimator } from "./estimator.js";
import type { LlmClient, LlmEstimator } from "./types.js";

export interface LlmServiceOptions {
  dataDir: string;
  /** `--no-cache`: never answer from the cache (fresh answers still replace the stored ones) */
  noCache: boolean;
  log: Logger;
  /** defaults to process.env */
  env?: Env;
}

export interface LlmService {
  /** Throws NotConfiguredError (with the recipe) when the role has no endpoint or no key. */
  client(role: string, usage: UsageMeter): LlmClient;
  /**
   * For `run --dry-run`: estimates from the role's config and the response cache, with or without
   * an endpoint. Creates no cache file; a missing one means nothing is answered yet.
   */
  estimator(role: string): LlmEstimator;
  close(): Promise<void>;
}

export function cachePath(config: LlmConfig, dataDir: string): string {
  return isAbsolute(config.cache.path) ? config.cache.path : join(dataDir, config.cache.path);
}

export function createLlmService(config: LlmConfig, options: LlmServiceOptions): LlmService {
  let cache: ResponseCache | undefined;
  const endpoints = new Map<string, RoleEndpoint>();
  const path = cachePath(config, options.dataDir);
  // A dry-run reads the cache if there is one, and creates none.
  const existingCache = () => {
    if (!cache && existsSync(path)) cache = new ResponseCache(path);
    return cache;
  };
  return {
    client(role, usage) {
      let endpoint = endpoints.get(role);
      if (!endpoint) {
        const resolved = resolveEndpoint(config, role, options.env ?? process.env);
        cache ??= new ResponseCache(path);
        endpoint = new RoleEndpoint(resolved, {
          cache,
          noCache: options.noCache,
          price: priceOf(config, resolved.config.model),
          log: options.log,
        });
        endpoints.set(role, endpoint);
      }
      return new ChatClient(endpoint, usage);
    },
    estimator(role) {
      const endpoint = endpoints.get(role);
      if (endpoint) return endpoint.estimator;
      const rc = requireRole(config, role);
      return new RequestEstimator({
        role,
        model: rc.model,
        sampling: rc.sampling,
        price: priceOf(config, rc.model),
        cache: existingCache,
        noCache: options.noCache,
      });
    },
    async close() {
      for (const endpoint of endpoints.values()) endpoint.close();
      endpoints.clear();
      cache?.close();
      cache = undefined;
    },
  };
}

export { LlmAbortedError, LlmAuthError, LlmRequestError } from "./errors.js";
export { loadPrompt, type PromptTemplate } from "./prompts.js";
export type {
  ChatMessage,
  ChatOptions,
  ChatResult,
  LlmClient,
  LlmEstimator,
  RequestEstimate,
} from "./types.js";
