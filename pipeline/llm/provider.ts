// Which provider serves a role. `auto` (the default) takes the role's OpenAI-compatible endpoint when
// one is configured (`base_url`, or the variable named by `base_url_env`, OPENAI_BASE_URL by default)
// and the embedded model otherwise; `openai` and `embedded` force one. Deciding needs the config and
// the environment only, so `run --dry-run` and `status` can say it without loading or sending anything.
import { existsSync } from "node:fs";
import { type LlmConfig, type RoleConfig, roleConfig } from "./config.js";
import { embeddedModelName } from "./embedded/config.js";
import { localModelPath } from "./embedded/model-file.js";
import { configuredUrls, type Env, requireRole } from "./endpoint.js";

export interface ProviderChoice {
  role: string;
  provider: "openai" | "embedded";
  /** the model's name in requests, answers and the cache key */
  model: string;
  /** true when `provider` was set, false when `auto` chose */
  forced: boolean;
  config: RoleConfig;
}

export function chooseProvider(config: LlmConfig, role: string, env: Env): ProviderChoice {
  const rc = requireRole(config, role);
  const forced = rc.provider !== "auto";
  const provider =
    rc.provider === "auto" ? (configuredUrls(rc, env).length > 0 ? "openai" : "embedded") : rc.provider;
  const model = provider === "embedded" ? embeddedModelName(rc.embedded) : rc.model;
  return { role, provider, model, forced, config: rc };
}

/**
 * One line per role for `run --dry-run` and `status`: the provider, the model, and where it is (the
 * server, or the GGUF file and whether it is on this machine yet).
 */
export function describeProvider(config: LlmConfig, role: string, env: Env, dataDir: string): string {
  const choice = chooseProvider(config, role, env);
  const how = choice.forced ? "provider set in the config" : "provider auto";
  const rc = choice.config;
  if (choice.provider === "openai") {
    const urls = configuredUrls(rc, env);
    const where =
      urls.length > 0
        ? `at ${urls.map(shownUrl).join(", ")}${rc.base_url ? "" : ` ($${rc.base_url_env})`}`
        : `with no endpoint yet (set ${rc.base_url_env} or llm.${role}.base_url)`;
    return `llm role ${role}: OpenAI-compatible server ${where}, model ${choice.model} (${how})`;
  }
  const file = localModelPath(rc.embedded, dataDir);
  const present = existsSync(file)
    ? "on this machine"
    : rc.embedded.path
      ? "MISSING"
      : "fetched from the hub on first use";
  return `llm role ${role}: embedded (node-llama-cpp), model ${choice.model}, GGUF ${file} (${present}) (${how})`;
}

/** A URL without credentials or query, which may hold a key. */
function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`.replace(/\/+$/, "");
  } catch {
    return "(not a URL)";
  }
}

/**
 * What of a role decides its answers, for a stage's fingerprint: the model it resolves to, the
 * provider (an endpoint appearing in the environment switches `auto`) and the sampling. Undefined for
 * a role the config does not have (the stage's own check names it when it runs).
 */
export function roleFingerprint(config: LlmConfig, role: string, env: Env = process.env) {
  if (!roleConfig(config, role)) return undefined;
  const { model, provider, config: rc } = chooseProvider(config, role, env);
  return { role, model, provider, sampling: rc.sampling };
}
