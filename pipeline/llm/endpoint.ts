// Where a role's requests go and with which key: the YAML first, then the environment. A role that
// cannot be resolved is a NotConfiguredError whose message is the recipe to configure it.
import { NotConfiguredError } from "../errors.js";
import { type LlmConfig, ROLE_NAMES, type RoleConfig, roleConfig } from "./config.js";

export interface Endpoint {
  role: string;
  baseUrl: string;
  /** undefined when the server needs none */
  apiKey: string | undefined;
  /** the variable the key came from (for advice in errors; never the key) */
  apiKeyEnv: string;
  config: RoleConfig;
}

export type Env = Record<string, string | undefined>;

export function resolveEndpoint(config: LlmConfig, role: string, env: Env = process.env): Endpoint {
  const rc = roleConfig(config, role);
  if (!rc) {
    throw new NotConfiguredError(
      `unknown LLM role '${role}': the roles are ${ROLE_NAMES.join(", ")} (config section llm.<role>).`,
    );
  }
  const baseUrl = (rc.base_url ?? env[rc.base_url_env] ?? "").trim();
  if (!baseUrl) {
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
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new NotConfiguredError(
      `the base URL of the LLM role '${role}' is not a URL: '${baseUrl}' ` +
        `(from ${rc.base_url ? `llm.${role}.base_url` : `$${rc.base_url_env}`}). ` +
        "Write it like http://127.0.0.1:8000/v1.",
    );
  }
  const apiKey = env[rc.api_key_env]?.trim() || undefined;
  const required = rc.api_key_required === "auto" ? !isLocalHost(url.hostname) : rc.api_key_required;
  if (!apiKey && required) {
    throw new NotConfiguredError(
      `no API key for the LLM role '${role}' at ${url.origin}: set ${rc.api_key_env} in the environment ` +
        `(or point llm.${role}.api_key_env at the variable holding it). If this server needs no key, ` +
        `set llm.${role}.api_key_required: false.`,
    );
  }
  return { role, baseUrl: baseUrl.replace(/\/+$/, ""), apiKey, apiKeyEnv: rc.api_key_env, config: rc };
}

function isLocalHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, "");
  return h === "localhost" || h === "::1" || h.startsWith("127.") || h.endsWith(".localhost");
}
