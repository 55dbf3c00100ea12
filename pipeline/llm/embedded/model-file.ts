// Where the embedded model's GGUF file comes from: a local path, or a hub file fetched through the
// project's hub client (endpoint, token, retries, resumable and verified) into
// `<data_dir>/models/<owner>/<name>/<revision>/<file>`. A verified file is never fetched again; one
// pinned to a commit is found without asking the hub. Offline, an earlier copy is used; with none,
// the run stops with where to put the file or how to use a server instead.
import { stat } from "node:fs/promises";
import path from "node:path";
import { UserError } from "../../errors.js";
import { HubClient } from "../../hub/client.js";
import type { HubConfig } from "../../hub/config.js";
import { downloadVerified, verifiedNote } from "../../hub/download.js";
import { HubNotFoundError, HubUnreachableError } from "../../hub/errors.js";
import type { Logger } from "../../log.js";
import { type EmbeddedModelConfig, embeddedModelName } from "./config.js";

/** The model file is neither on this machine nor fetchable: the run stops (exit 2) with advice. */
export class ModelUnavailableError extends UserError {}

export interface ModelFileContext {
  role: string;
  /** whether the role chose the embedded model itself (`provider: embedded`) or got it by default */
  forced: boolean;
  /** the variable `auto` reads the endpoint from, for the advice */
  baseUrlEnv: string;
  dataDir: string;
  hub: HubConfig;
  env?: NodeJS.ProcessEnv | undefined;
  log?: Logger | undefined;
}

const COMMIT = /^[0-9a-f]{40}$/;

/** Where the GGUF is (or will be) on this machine. */
export function localModelPath(config: EmbeddedModelConfig, dataDir: string): string {
  if (config.path) return path.resolve(config.path);
  return path.resolve(
    dataDir,
    "models",
    ...config.repo.split("/"),
    config.revision,
    ...config.file.split("/"),
  );
}

/** The hub settings the model is fetched with: `hub:`, with the model's own endpoint over it. */
export function modelHub(config: EmbeddedModelConfig, hub: HubConfig): HubConfig {
  if (config.hub_endpoint === undefined) return hub;
  const { endpoint: _datasets, ...rest } = hub;
  return config.hub_endpoint === "default" ? rest : { ...rest, endpoint: config.hub_endpoint };
}

/** The verified GGUF file's absolute path, fetching it first if needed. */
export async function ensureModelFile(
  config: EmbeddedModelConfig,
  context: ModelFileContext,
): Promise<string> {
  const dest = localModelPath(config, context.dataDir);
  if (config.path) {
    const info = await stat(dest).catch(() => undefined);
    if (!info?.isFile()) throw unavailable(config, context, dest, `there is no file at ${dest}`);
    return dest;
  }
  // Pinned to a commit and verified earlier: nothing to ask the hub.
  const note = await verifiedNote(dest);
  const size = (await stat(dest).catch(() => undefined))?.size;
  if (COMMIT.test(config.revision) && note?.commit === config.revision && note.size === size) return dest;

  const hub = modelHub(config, context.hub);
  const options = { log: context.log, env: context.env };
  const client = new HubClient(hub, options);
  try {
    // The first question is asked with one retry at most: offline, the run should say so in seconds,
    // not after the full backoff; the transfer itself keeps the configured patience.
    const probe = new HubClient({ ...hub, retries: Math.min(hub.retries, 1) }, options);
    const commit = await probe.resolveCommit(config.repo, config.revision, "model");
    const [file] = await client.listFiles(config.repo, commit, [config.file], "model");
    let shown = 0;
    const done = await downloadVerified(client, file!, commit, dest, {
      onProgress: (bytes, total) => {
        // a line every tenth: a 1 GB model takes a while on a slow line
        const tenth = Math.floor((bytes / total) * 10);
        if (tenth > shown) {
          shown = tenth;
          context.log?.info(`fetching ${embeddedModelName(config)}: ${tenth * 10}%`);
        }
      },
    });
    if (done.fetched) {
      context.log?.info(
        `fetched ${config.repo}/${config.file} at commit ${commit} (${done.size} bytes, verified)`,
      );
    }
    return dest;
  } catch (error) {
    if (error instanceof HubUnreachableError && size !== undefined && size > 0) {
      const when = note ? `verified at commit ${note.commit}` : "placed by hand, not verified";
      context.log?.warn(
        `hub unreachable; using the copy of ${embeddedModelName(config)} at ${dest} (${when})`,
      );
      return dest;
    }
    if (error instanceof HubUnreachableError || error instanceof HubNotFoundError) {
      const why = error instanceof HubUnreachableError ? error.reason : error.message;
      throw unavailable(config, context, dest, why, error);
    }
    throw error;
  }
}

function unavailable(
  config: EmbeddedModelConfig,
  context: ModelFileContext,
  dest: string,
  why: string,
  cause?: unknown,
): ModelUnavailableError {
  const { role } = context;
  const how = context.forced
    ? `llm role '${role}' runs the embedded model ${embeddedModelName(config)}`
    : `no endpoint for the LLM role '${role}', so it runs the embedded model ${embeddedModelName(config)}`;
  const fetch = config.path
    ? `  - put the GGUF file at ${dest}, or set llm.${role}.embedded.path to where it is (or remove ` +
      "`path` to fetch the configured hub file);\n"
    : "  - run once where the hub is reachable (it is fetched and verified once; HF_ENDPOINT or " +
      `llm.${role}.embedded.hub_endpoint names a mirror, not hub.endpoint), or put the GGUF file ${config.file} at ${dest}, or anywhere with ` +
      `llm.${role}.embedded.path: /path/to/model.gguf;\n`;
  const server =
    `  - or point the role at any OpenAI-compatible server: export ${context.baseUrlEnv}=http://127.0.0.1:8000/v1 ` +
    `(or llm.${role}.base_url${context.forced ? `, with llm.${role}.provider: auto` : ""}) and set ` +
    `llm.${role}.model to the name the server lists.`;
  return new ModelUnavailableError(
    `${how}, which is not on this machine: ${why}.\nNothing was sent; what ran before is saved. Either:\n${fetch}${server}`,
    cause === undefined ? undefined : { cause },
  );
}
