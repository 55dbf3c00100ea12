// Where a role's requests go and with which key: the YAML first, then the environment. A role that
// cannot be resolved is a NotConfiguredError whose message is the recipe to configure it.

import { urlList } from "../balance/config.js";
import { NotConfiguredError } from "../errors.js";
import { type LlmConfig, ROLE_NAMES, type RoleConfig, roleConfig } from "./config.js";

/** One server of a role; a role may have several replicas of the same model. */
export interface Replica {
  baseUrl: string;
  /** the base URL for messages and usage: without credentials or a query, which may hold a key */
  shownUrl: string;
}

export interface Endpoint {
  role: string;
  /** the first replica's, for messages about the role as a whole */
  baseUrl: string;
  /** the base URL for messages: without credentials or a query, which may hold a key */
  shownUrl: string;
  /** every server of the role, the first one included; requests are spread over them */
  replicas: Replica[];
  /** undefined when the server needs none */
  apiKey: string | undefined;
  /** where the key came from, e.g. `$OPENAI_API_KEY` or `llm.scorer.api_key` (for advice; never the key) */
  apiKeySource: string;
  config: RoleConfig;
}

export type Env = Record<string, string | undefined>;

/** The role's section of `llm:`; an unknown role is a NotConfiguredError naming the known ones. */
export function requireRole(config: LlmConfig, role: string): RoleConfig {
  const rc = roleConfig(config, role);
  if (!rc) {
    throw new NotConfiguredError(
      `unknown LLM role '${role}': the roles are ${ROLE_NAMES.join(", ")} (config section llm.<role>).`,
    );
  }
  return rc;
}

export function resolveEndpoint(config: LlmConfig, role: string, env: Env = process.env): Endpoint {
  const rc = requireRole(config, role);
  const urls = configuredUrls(rc, env);
  if (urls.length === 0) {
    throw new NotConfiguredError(
      `no endpoint for the LLM role '${role}' (model ${rc.model}). Configure one of:\n` +
        `  - in the config file:  llm:\n                          ${role}:\n` +
        `                            base_url: http://127.0.0.1:8000/v1   # any OpenAI-compatible server\n` +
        `                            model: ${rc.model}\n` +
        `  - or in the environment: export ${rc.base_url_env}=http://127.0.0.1:8000/v1\n` +
        `and the key, if the server needs one: export ${rc.api_key_env}=... ` +
        `(llm.${role}.api_key_env names another variable).`,
    );
  }
  const parsed = urls.map((baseUrl) => {
    try {
      return new URL(baseUrl);
    } catch {
      throw new NotConfiguredError(
        `the base URL of the LLM role '${role}' is not a URL: '${baseUrl}' ` +
          `(from ${rc.base_url ? `llm.${role}.base_url` : `$${rc.base_url_env}`}). ` +
          "Write it like http://127.0.0.1:8000/v1 (several replicas: a YAML list, or comma-separated in the variable).",
      );
    }
  });
  const fromConfig = rc.api_key?.trim() || undefined;
  const apiKey = fromConfig ?? (env[rc.api_key_env]?.trim() || undefined);
  const apiKeySource = fromConfig ? `llm.${role}.api_key` : `$${rc.api_key_env}`;
  const remote = parsed.find((url) => !isLocalHost(url.hostname));
  const required = rc.api_key_required === "auto" ? remote !== undefined : rc.api_key_required;
  if (!apiKey && required) {
    throw new NotConfiguredError(
      `no API key for the LLM role '${role}' at ${(remote ?? parsed[0]!).origin}: set ${rc.api_key_env} in the environment ` +
        `(or point llm.${role}.api_key_env at the variable holding it). If this server needs no key, ` +
        `set llm.${role}.api_key_required: false.`,
    );
  }
  const replicas = parsed.map((url, i) => ({
    baseUrl: urls[i]!.replace(/\/+$/, ""),
    shownUrl: `${url.origin}${url.pathname}`.replace(/\/+$/, ""),
  }));
  const shown = new Set<string>();
  for (const replica of replicas) {
    if (shown.has(replica.shownUrl)) {
      throw new NotConfiguredError(
        `llm.${role}.base_url names ${replica.shownUrl} twice; list each replica once.`,
      );
    }
    shown.add(replica.shownUrl);
  }
  const first = replicas[0]!;
  return {
    role,
    baseUrl: first.baseUrl,
    shownUrl: first.shownUrl,
    replicas,
    apiKey,
    apiKeySource,
    config: rc,
  };
}

/** The role's server URLs: `base_url` (one or a list), else the comma-separated variable. */
export function configuredUrls(rc: RoleConfig, env: Env): string[] {
  if (rc.base_url !== undefined) return urlList(rc.base_url);
  return urlList((env[rc.base_url_env] ?? "").split(","));
}

function isLocalHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, "");
  return h === "localhost" || h === "::1" || h.startsWith("127.") || h.endsWith(".localhost");
}
