// Where a transformers.js model's files come from: a local directory as configured, or the hub through
// the project's hub client (HF_ENDPOINT or `hub.endpoint`, the token, retries, resumable verified
// downloads), into `<dataDir>/models/<owner>/<name>/<commit>/`. Either way transformers.js then
// loads a local directory and never goes to the network itself, so a test model and a real one take
// the same path from here on.
import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { UserError } from "../errors.js";
import { HubClient, type HubFile } from "../hub/client.js";
import type { HubConfig } from "../hub/config.js";
import { downloadVerified } from "../hub/download.js";
import { HubNotFoundError, HubUnreachableError } from "../hub/errors.js";
import type { Logger } from "../log.js";

/** The ONNX weights file of each dtype, as transformers.js names them. */
export const ONNX_FILE: Record<"fp32" | "fp16" | "q8", string> = {
  fp32: "onnx/model.onnx",
  fp16: "onnx/model_fp16.onnx",
  q8: "onnx/model_quantized.onnx",
};

const REQUIRED = ["config.json", "tokenizer.json"];
const OPTIONAL = ["tokenizer_config.json", "special_tokens_map.json"];
/** the list of files a fetch brought, written once all of them are in place */
const FETCHED = ".fetched.json";

export interface ModelFiles {
  dir: string;
  /** the commit the files came from (hub), or undefined (a local directory) */
  commit: string | undefined;
}

export class ModelMissingError extends UserError {}

/** Checks that a local model directory has what transformers.js will open. */
export async function checkModelDir(dir: string, dtype: keyof typeof ONNX_FILE, what: string): Promise<void> {
  for (const file of [...REQUIRED, ONNX_FILE[dtype]]) {
    const info = await stat(path.join(dir, file)).catch(() => undefined);
    if (!info?.isFile()) {
      throw new ModelMissingError(
        `${what} has no ${file} (looked in ${dir}); a transformers.js model directory holds config.json, ` +
          `tokenizer.json and ${ONNX_FILE[dtype]}: export one with \`optimum-cli export onnx\`, or set ` +
          "`local_dir` to such a directory, or remove `local_dir` to fetch `model` from the hub",
      );
    }
  }
}

export async function fetchModelFiles(
  spec: { model: string; revision: string; dtype: keyof typeof ONNX_FILE },
  hub: HubConfig,
  dataDir: string,
  options: { signal?: AbortSignal | undefined; log?: Logger | undefined } = {},
): Promise<ModelFiles> {
  const client = new HubClient(hub, { signal: options.signal, log: options.log });
  const weights = ONNX_FILE[spec.dtype];
  const home = path.join(dataDir, "models", ...spec.model.split("/"));
  let commit: string;
  let listed: HubFile[];
  try {
    commit = await client.resolveCommit(spec.model, spec.revision, "model");
    listed = await client.listFiles(spec.model, commit, ["**"], "model");
  } catch (error) {
    if (error instanceof HubUnreachableError) {
      // Offline with a copy fetched earlier: use it rather than stop (the commit is in the cache key).
      const earlier = await earlierCopy(home, spec.dtype);
      if (earlier) {
        options.log?.warn(
          `hub unreachable; using ${spec.model} at commit ${earlier.commit}, fetched earlier`,
        );
        return earlier;
      }
    }
    if (error instanceof HubUnreachableError || error instanceof HubNotFoundError) {
      throw new ModelMissingError(
        `embedding model ${spec.model} (revision ${spec.revision}) is not available: ${error.message}. ` +
          `Offline, download it once where the hub is reachable (or mirror it and set HF_ENDPOINT), or point ` +
          "`embedder.local_dir` at a copy of the model directory, or choose `embedder.kind: lexical` explicitly",
        { cause: error },
      );
    }
    throw error;
  }
  const wanted = new Set([...REQUIRED, ...OPTIONAL, weights]);
  const files = listed.filter((f) => wanted.has(f.path) || f.path.startsWith(`${weights}_data`));
  for (const need of [...REQUIRED, weights]) {
    if (!files.some((f) => f.path === need)) {
      throw new ModelMissingError(
        `embedding model ${spec.model} at commit ${commit} has no ${need}; transformers.js needs ONNX ` +
          `weights in onnx/ (dtype ${spec.dtype} reads ${weights}): choose a model converted for it ` +
          "(e.g. the Xenova/ and onnx-community/ ones), another `dtype`, or a `local_dir`",
      );
    }
  }
  const dir = path.join(home, commit);
  for (const file of files) {
    const done = await downloadVerified(client, file, commit, path.join(dir, ...file.path.split("/")), {
      signal: options.signal,
    });
    if (done.fetched) options.log?.info(`fetched ${spec.model}/${file.path} (${done.size} bytes, verified)`);
  }
  // Written last: an offline run trusts only a copy whose every file arrived (see earlierCopy).
  await writeFile(path.join(dir, FETCHED), `${JSON.stringify(files.map((f) => f.path).sort())}\n`);
  return { dir, commit };
}

/**
 * A complete copy of the model fetched by an earlier run, when there is exactly one. Complete means
 * every file that run listed arrived: a copy killed before its tokenizer_config.json would load, but
 * tokenize differently, and its vectors would be cached under the very same commit.
 */
async function earlierCopy(home: string, dtype: keyof typeof ONNX_FILE): Promise<ModelFiles | undefined> {
  const commits = await readdir(home).catch(() => [] as string[]);
  const complete: ModelFiles[] = [];
  for (const commit of commits) {
    const dir = path.join(home, commit);
    const ok = await checkModelDir(dir, dtype, "").then(
      () => allFetched(dir),
      () => false,
    );
    if (ok) complete.push({ dir, commit });
  }
  return complete.length === 1 ? complete[0] : undefined;
}

async function allFetched(dir: string): Promise<boolean> {
  try {
    const files = JSON.parse(await readFile(path.join(dir, FETCHED), "utf8")) as string[];
    for (const file of files) if (!(await stat(path.join(dir, file))).isFile()) return false;
    return true;
  } catch {
    return false;
  }
}
