// The `llm:` section of the config: one endpoint per role (scorer, weak, strong), the response cache
// and the price table. Every key has a default so `llm: {}` parses; what cannot have a default (the
// server and its key) comes from the environment when the YAML leaves it out. A role with no server
// runs an embedded model in-process (`provider`, `embedded`; see provider.ts).
import { z } from "zod";
import { balanceSchema } from "../balance/config.js";
import { operational } from "../hash.js";
import { batchSchema } from "./batch/config.js";
import { embeddedModelSchema } from "./embedded/config.js";

/** Sampling parameters sent with every request of a role; all of them are part of the cache key. */
export const samplingSchema = z
  .object({
    temperature: z.number().min(0).max(2).optional(),
    top_p: z.number().gt(0).max(1).optional(),
    max_tokens: z.number().int().positive().optional(),
    seed: z.number().int().optional(),
    stop: z.array(z.string()).max(4).optional(),
  })
  .strict();
export type Sampling = z.infer<typeof samplingSchema>;

const roleShape = {
  /**
   * `auto`: the role's OpenAI-compatible endpoint when one is configured (`base_url`, or the
   * variable named by `base_url_env`), the embedded model otherwise; `openai` or `embedded` force one.
   */
  provider: z.enum(["auto", "openai", "embedded"]).default("auto"),
  /** the in-process GGUF model, for the embedded provider */
  embedded: embeddedModelSchema.default(embeddedModelSchema.parse({})),
  /**
   * e.g. `http://127.0.0.1:8000/v1` (vLLM), or a list of replicas serving the same model, which
   * requests are spread over (balance.ts); unset: `$OPENAI_BASE_URL` (or `base_url_env`)
   */
  base_url: z.union([z.string().url(), z.array(z.string().url()).min(1)]).optional(),
  /** environment variable read when `base_url` is unset; several replicas: comma-separated */
  base_url_env: z.string().min(1).default("OPENAI_BASE_URL"),
  model: z.string().min(1),
  /** environment variable holding this role's key; lets roles use different providers */
  api_key_env: z.string().min(1).default("OPENAI_API_KEY"),
  /**
   * The key itself, over `api_key_env`. Prefer the environment: a key in a config file travels
   * with it. Either way it is only ever sent to `base_url`, never logged, stored or hashed.
   */
  api_key: z.string().min(1).optional(),
  /**
   * Whether a missing key is a configuration error. `auto`: required unless the server is on this
   * machine (vLLM and Ollama usually run without one).
   */
  api_key_required: z.union([z.boolean(), z.literal("auto")]).default("auto"),
  sampling: samplingSchema.default({}),
  /** requests in flight at once against each of this role's endpoints */
  concurrency: operational(z.number().int().positive().max(4096).default(16)),
  /** seconds a single attempt may take, response body included */
  timeout_s: operational(z.number().positive().default(120)),
  /** attempts after the first one, on 429, 5xx, timeouts, dropped connections and unreadable answers */
  retries: operational(z.number().int().min(0).max(50).default(6)),
  /** first backoff in seconds; doubles each attempt (with jitter) up to `max_backoff_s` */
  backoff_s: operational(z.number().positive().default(1)),
  max_backoff_s: operational(z.number().positive().default(60)),
  /**
   * seconds a role whose servers have never answered in this run (refused, unknown host, TLS,
   * timeouts) is tried before the run stops with exit 3, instead of failing record after record
   */
  probe_s: operational(z.number().positive().default(30)),
  /** seconds every server of the role may fail (after one answered) before `on_outage` applies */
  outage_s: operational(z.number().positive().default(300)),
  /**
   * `wait`: requests stop spending their retries, so no record is marked failed and no new one starts,
   * until a server answers again; `stop`: the run stops with exit 3 (a cluster job to resubmit)
   */
  on_outage: operational(z.enum(["wait", "stop"]).default("wait")),
  /** optional budgets of the provider's rate limits; unset means unlimited */
  requests_per_minute: operational(z.number().positive().optional()),
  tokens_per_minute: operational(z.number().positive().optional()),
  /** ask for server-sent events instead of one JSON body (usage still requested) */
  stream: operational(z.boolean().default(false)),
  /** with several endpoints: when one is taken out of rotation and tried again */
  balance: operational(balanceSchema.prefault({})),
  /**
   * unset: online, one request each; else the cache misses go to batch jobs (batch/config.ts). The
   * answers and the cache are the same either way, so switching never makes a stage stale.
   */
  batch: operational(batchSchema.optional()),
};

/** A role's section, which `llm: {}` fills with the role's defaults. */
function roleSchema(defaults: { model: string; sampling: Sampling }) {
  const schema = z
    .object({
      ...roleShape,
      model: roleShape.model.default(defaults.model),
      sampling: samplingSchema.default(defaults.sampling),
    })
    .strict();
  return schema.default(schema.parse({}));
}

export type RoleConfig = z.infer<ReturnType<typeof roleSchema>>;

/** USD per million tokens. */
export const priceSchema = z
  .object({
    prompt: z.number().min(0),
    completion: z.number().min(0),
  })
  .strict();
export type Price = z.infer<typeof priceSchema>;

// List prices of the paper's models at the time of writing; self-hosted models cost nothing here.
// Override or extend under `llm.prices` (model name -> USD per million tokens).
const DEFAULT_PRICES: Record<string, Price> = {
  "gpt-3.5-turbo": { prompt: 0.5, completion: 1.5 },
  "gpt-3.5-turbo-0125": { prompt: 0.5, completion: 1.5 },
  "gpt-4": { prompt: 30, completion: 60 },
  "gpt-4-0613": { prompt: 30, completion: 60 },
  "gpt-4-turbo": { prompt: 10, completion: 30 },
  "gpt-4o": { prompt: 2.5, completion: 10 },
  "gpt-4o-mini": { prompt: 0.15, completion: 0.6 },
};

// The paper: Qwen-72B-Chat scores complexity, GPT-3.5 plays the user, GPT-4 corrects. Scoring is
// deterministic so that a rerun with the cache off reproduces the same funnel.
const ROLE_DEFAULTS = {
  scorer: { model: "Qwen/Qwen-72B-Chat", sampling: { temperature: 0, max_tokens: 512 } },
  weak: { model: "gpt-3.5-turbo", sampling: { temperature: 0.7, max_tokens: 2048 } },
  strong: { model: "gpt-4", sampling: { temperature: 0.7, max_tokens: 4096 } },
} as const;

export const ROLE_NAMES = ["scorer", "weak", "strong"] as const;

export const llmConfigSchema = z
  .object({
    scorer: roleSchema(ROLE_DEFAULTS.scorer),
    weak: roleSchema(ROLE_DEFAULTS.weak),
    strong: roleSchema(ROLE_DEFAULTS.strong),
    cache: z
      .object({
        /** SQLite file; relative paths resolve against `data_dir` */
        path: z.string().min(1).default("llm-cache.sqlite"),
      })
      .strict()
      .default({ path: "llm-cache.sqlite" }),
    /** model name -> USD per million prompt/completion tokens; merged over the built-in table */
    prices: z.record(z.string(), priceSchema).default({}),
  })
  .strict();
export type LlmConfig = z.infer<typeof llmConfigSchema>;

export function roleConfig(config: LlmConfig, role: string): RoleConfig | undefined {
  if (role === "scorer" || role === "weak" || role === "strong") return config[role];
  return undefined;
}

/** The price of a model, from the config's table over the built-in one; undefined when unknown. */
export function priceOf(config: LlmConfig, model: string): Price | undefined {
  return config.prices[model] ?? DEFAULT_PRICES[model];
}

export function costUsd(price: Price | undefined, promptTokens: number, completionTokens: number): number {
  if (!price) return 0;
  return (promptTokens * price.prompt + completionTokens * price.completion) / 1_000_000;
}
