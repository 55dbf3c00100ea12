// The LLM service: `client(role, usage)` for stages, built lazily so a run that needs no LLM never
// opens the cache or asks for an endpoint. See docs/llm.md.
import { isAbsolute, join } from "node:path";
import type { Logger } from "../log.js";
import type { UsageMeter } from "../usage.js";
import { ResponseCache } from "./cache.js";
import { ChatClient, estimateUncached, RoleEndpoint } from "./client.js";
import { type LlmConfig, priceOf, roleConfig } from "./config.js";
import { type Env, resolveEndpoint } from "./endpoint.js";
import type { ChatMessage, ChatOptions, LlmClient, RequestEstimate } from "./types.js";

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
  close(): Promise<void>;
}

export function cachePath(config: LlmConfig, dataDir: string): string {
  return isAbsolute(config.cache.path) ? config.cache.path : join(dataDir, config.cache.path);
}

export function createLlmService(config: LlmConfig, options: LlmServiceOptions): LlmService {
  let cache: ResponseCache | undefined;
  const endpoints = new Map<string, RoleEndpoint>();
  return {
    client(role, usage) {
      let endpoint = endpoints.get(role);
      if (!endpoint) {
        const resolved = resolveEndpoint(config, role, options.env ?? process.env);
        cache ??= new ResponseCache(cachePath(config, options.dataDir));
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
    async close() {
      for (const endpoint of endpoints.values()) endpoint.close();
      endpoints.clear();
      cache?.close();
      cache = undefined;
    },
  };
}

/**
 * An estimate for a role that may have no endpoint yet (`run --dry-run` before configuring one):
 * the role's model, sampling and price from the config; the cache is not consulted.
 */
export function estimateWithoutEndpoint(
  config: LlmConfig,
  role: string,
  messages: readonly ChatMessage[],
  options?: ChatOptions,
): RequestEstimate {
  const rc = roleConfig(config, role);
  const sampling = { ...rc?.sampling };
  if (options?.max_tokens !== undefined) sampling.max_tokens = options.max_tokens;
  return estimateUncached(
    messages,
    sampling,
    rc ? priceOf(config, rc.model) : undefined,
    options?.expectedCompletionTokens,
  );
}

export { LlmAbortedError, LlmAuthError, LlmRequestError } from "./errors.js";
export { loadPrompt, type PromptTemplate } from "./prompts.js";
export type { ChatMessage, ChatOptions, ChatResult, LlmClient, RequestEstimate } from "./types.js";
