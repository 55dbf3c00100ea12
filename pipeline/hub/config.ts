// The `hub:` section of the config: where datasets are fetched from and how patiently. Every key has a
// default, so a config without `hub:` talks to the public Hugging Face hub (or to `HF_ENDPOINT`).
import { z } from "zod";

export const hubConfigSchema = z
  .object({
    /**
     * Base URL of the hub or of a mirror. Unset: `$HF_ENDPOINT`, else the public hub. `file:DIR` serves
     * the directory DIR (laid out as `DIR/<owner>/<name>/<path>`) as if it were a hub, offline, through
     * the same client code path; relative directories resolve against the current directory.
     */
    endpoint: z.string().min(1).optional(),
    /** name of the environment variable that holds the access token (gated or private datasets) */
    token_env: z.string().min(1).default("HF_TOKEN"),
    /** seconds to wait for a response to start, and the longest silence allowed inside a download */
    timeout_s: z.number().positive().default(60),
    /** attempts after the first for network errors, 5xx and 429; 401/404 are never retried */
    retries: z.number().int().min(0).default(5),
    /** first pause between attempts; doubles each time */
    retry_backoff_s: z.number().min(0).default(1),
  })
  .strict();
export type HubConfig = z.infer<typeof hubConfigSchema>;

/** The endpoint in force: the config's, else `$HF_ENDPOINT`, else undefined (the client's public default). */
export function resolveEndpoint(config: HubConfig, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const endpoint = config.endpoint ?? env.HF_ENDPOINT;
  return endpoint === undefined || endpoint === "" ? undefined : endpoint.replace(/\/+$/, "");
}
