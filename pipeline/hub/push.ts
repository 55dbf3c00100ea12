// Uploading a directory (the export) to a dataset repository on the hub, through `@huggingface/hub`,
// resumably (pushDirectory says how).

import { pathToFileURL } from "node:url";
import { commit, createBranch, createRepo, HubApiError, listFiles, repoExists } from "@huggingface/hub";
import { InterruptedError, UserError } from "../errors.js";
import { formatBytes, type Logger, silentLogger } from "../log.js";
import { type HubConfig, resolveEndpoint } from "./config.js";
import { createHubFetch } from "./fetch.js";
import { type LocalFile, listLocalFiles, type RemoteFile, sameContent } from "./local-files.js";
import { explainPushError, PushTokenError } from "./push-errors.js";

export interface PushOptions {
  /** the directory whose top-level files are uploaded */
  dir: string;
  /** `OWNER/NAME` of the dataset repository */
  repo: string;
  /** create the repository private when it does not exist (an existing one keeps its visibility) */
  private?: boolean;
  /** the branch to commit to; created from the default branch when missing */
  revision?: string;
  hub: HubConfig;
  env?: NodeJS.ProcessEnv;
  log?: Logger;
  signal?: AbortSignal;
  /** which file names of `dir` to upload; default: all but dot-files, temporaries (`*.tmp`, `*.tmp-PID`) and stage bookkeeping */
  include?: (name: string) => boolean;
  /** files that must be there with this sha256 (what the export says it wrote); "" checks presence only */
  expect?: ReadonlyMap<string, string>;
}

export interface PushResult {
  repo: string;
  revision: string;
  createdRepo: boolean;
  createdBranch: boolean;
  /** paths sent in this push */
  uploaded: string[];
  /** paths the branch already held with the same bytes */
  unchanged: string[];
  /** paths on the branch that the directory does not have (left there) */
  remoteOnly: string[];
  commits: { oid: string; files: string[] }[];
}

/** A stage directory's own files: never part of what is published. */
const BOOKKEEPING = new Set(["manifest.json", "lock"]);

export function isPublishable(name: string): boolean {
  return !name.startsWith(".") && !/\.tmp(-\d+)?$/.test(name) && !BOOKKEEPING.has(name);
}

/** Files above this size get a commit each. */
const COMMIT_ALONE_BYTES = 1 << 20;

const REPO_NAME = /^[A-Za-z0-9][\w.-]*\/[A-Za-z0-9][\w.-]*$/;

/** No time limit on an upload's answer: it starts only once the whole body is sent. */
const UPLOAD_TIMEOUT_MS = 2 ** 31 - 1;

/**
 * Resumable in three layers: (1) a file the branch already holds byte for byte (sha256 and git blob
 * id against the hub's tree) is not sent; (2) each large file is its own commit, so what an
 * interrupted push finished is on the branch, and the small files (card, report) share the last
 * commit, so the card appears once its data is there; (3) within a commit, the LFS batch API answers
 * "already have it" for bytes the hub stored before the commit was cut.
 */
export async function pushDirectory(options: PushOptions): Promise<PushResult> {
  const env = options.env ?? process.env;
  const log = options.log ?? silentLogger;
  const revision = options.revision ?? "main";
  const repo = { type: "dataset" as const, name: options.repo };
  if (!REPO_NAME.test(options.repo)) {
    throw new UserError(
      `"${options.repo}" is not a repository name; pass --repo OWNER/NAME, e.g. my-org/code-feedback`,
    );
  }
  const endpoint = resolveEndpoint(options.hub, env);
  if (endpoint?.startsWith("file:")) {
    throw new UserError(
      `hub.endpoint is ${endpoint}, a read-only local directory; a push needs a hub: unset hub.endpoint ` +
        "(and HF_ENDPOINT) for the public hub, or set it to your hub's URL",
    );
  }
  const tokenEnv = options.hub.token_env;
  const token = env[tokenEnv];
  if (!token) {
    throw new PushTokenError(
      `no token in $${tokenEnv}; a push needs one with write access to ${owner(options.repo)}: create it at ` +
        `https://huggingface.co/settings/tokens and export ${tokenEnv}=...`,
    );
  }
  // @huggingface/hub refuses anything else before any request; say so in our words
  if (!token.startsWith("hf_")) {
    throw new PushTokenError(`$${tokenEnv} does not hold a Hugging Face access token (those start with hf_)`);
  }
  const where = endpoint ?? "the public Hugging Face hub";
  const params = {
    accessToken: token,
    fetch: pushFetch(options.hub, endpoint, options.signal),
    ...(endpoint ? { hubUrl: endpoint } : {}),
  };
  const call = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (error) {
      throw explainPushError(error, what, {
        endpoint: where,
        tokenEnv,
        owner: owner(options.repo),
        signal: options.signal,
      });
    }
  };

  const local = await listLocalFiles(options.dir, options.include ?? isPublishable);
  if (local.length === 0) {
    throw new UserError(`${options.dir} has no files to push; run \`pnpm pipeline run export\` first`);
  }
  checkExpected(options.dir, local, options.expect);
  const label = `dataset ${options.repo}`;

  let createdRepo = false;
  if (!(await call(`checking ${label}`, () => repoExists({ repo, ...params })))) {
    createdRepo = await call(`creating ${label}`, () => createIfMissing(repo, options.private, params));
    if (createdRepo) log.info(`created ${options.private ? "private" : "public"} ${label}`);
  } else if (options.private) {
    log.warn(`${label} already exists; --private applies only when creating it, its visibility is unchanged`);
  }

  let createdBranch = false;
  let remote = await call(`listing ${label} at ${revision}`, () => remoteFiles(repo, revision, params));
  if (remote === undefined) {
    if (revision === "main") remote = new Map();
    else {
      await call(`creating branch ${revision} of ${label}`, () =>
        createBranch({ repo, branch: revision, ...params }),
      );
      createdBranch = true;
      log.info(`created branch ${revision} of ${label} from its default branch`);
      remote =
        (await call(`listing ${label} at ${revision}`, () => remoteFiles(repo, revision, params))) ??
        new Map();
    }
  }

  const unchanged: string[] = [];
  const todo: LocalFile[] = [];
  for (const file of local) {
    const there = remote.get(file.path);
    if (there && sameContent(file, there)) unchanged.push(file.path);
    else todo.push(file);
  }
  const localPaths = new Set(local.map((f) => f.path));
  const remoteOnly = [...remote.keys()].filter((p) => !localPaths.has(p) && p !== ".gitattributes").sort();
  if (remoteOnly.length) {
    log.info(`on ${revision} but not in ${options.dir} (left as they are): ${remoteOnly.join(", ")}`);
  }
  if (unchanged.length) log.info(`already on ${revision}, not sent: ${unchanged.join(", ")}`);

  // large files one commit each, in path order; then every small file in one last commit
  const small = todo.filter((f) => f.size <= COMMIT_ALONE_BYTES);
  const groups = [
    ...todo.filter((f) => f.size > COMMIT_ALONE_BYTES).map((f) => [f]),
    ...(small.length ? [small] : []),
  ];
  const commits: PushResult["commits"] = [];
  for (const [index, group] of groups.entries()) {
    if (options.signal?.aborted) {
      throw new InterruptedError(
        `the push stopped after ${commits.length} of ${groups.length} commits (interrupted); rerun the same command: files the hub already holds are not sent again`,
      );
    }
    const names = group.map((f) => f.path);
    const bytes = group.reduce((n, f) => n + f.size, 0);
    const what = `uploading ${names.join(", ")} to ${label} (${revision})`;
    const output = await call(what, () =>
      commit({
        repo,
        branch: revision,
        title: `Upload ${names.join(", ")}`,
        operations: group.map((f) => ({
          operation: "addOrUpdate" as const,
          path: f.path,
          content: pathToFileURL(f.absolute),
        })),
        ...(options.signal ? { abortSignal: options.signal } : {}),
        ...params,
      }),
    );
    const oid = output?.commit.oid ?? "";
    commits.push({ oid, files: names });
    log.info(
      `${names.join(", ")} (${formatBytes(bytes)}) committed to ${revision}${oid ? ` as ${oid.slice(0, 8)}` : ""} ` +
        `(${index + 1}/${groups.length})`,
    );
  }
  if (groups.length === 0) log.info(`${label} at ${revision} is up to date; nothing sent`);
  return {
    repo: options.repo,
    revision,
    createdRepo,
    createdBranch,
    uploaded: todo.map((f) => f.path),
    unchanged,
    remoteOnly,
    commits,
  };
}

/** Refuses to publish a directory that is not what its writer said it wrote (edited, or half rewritten). */
function checkExpected(
  dir: string,
  local: LocalFile[],
  expect: ReadonlyMap<string, string> | undefined,
): void {
  if (!expect) return;
  const byPath = new Map(local.map((f) => [f.path, f]));
  for (const [name, sha256] of expect) {
    const file = byPath.get(name);
    if (!file) {
      throw new UserError(
        `${name} is missing from ${dir}; rerun \`pnpm pipeline run export --force\`, then push`,
      );
    }
    if (sha256 !== "" && file.sha256 !== sha256) {
      throw new UserError(
        `${name} in ${dir} is not the file export wrote (its sha256 differs); rerun \`pnpm pipeline run export --force\`, then push`,
      );
    }
  }
}

async function createIfMissing(
  repo: { type: "dataset"; name: string },
  isPrivate: boolean | undefined,
  params: { accessToken: string; fetch: typeof fetch; hubUrl?: string },
): Promise<boolean> {
  try {
    await createRepo({ repo, ...(isPrivate ? { visibility: "private" as const } : {}), ...params });
    return true;
  } catch (error) {
    // created by someone else between the check and now: it exists, which is all we need
    if (error instanceof HubApiError && error.statusCode === 409) return false;
    throw error;
  }
}

/** The branch's files by path, or undefined when the branch does not exist. */
async function remoteFiles(
  repo: { type: "dataset"; name: string },
  revision: string,
  params: { accessToken: string; fetch: typeof fetch; hubUrl?: string },
): Promise<Map<string, RemoteFile> | undefined> {
  const files = new Map<string, RemoteFile>();
  try {
    for await (const entry of listFiles({ repo, revision, recursive: true, ...params })) {
      if (entry.type !== "file") continue;
      files.set(entry.path, { path: entry.path, oid: entry.oid, lfs: entry.lfs });
    }
  } catch (error) {
    // the repository exists (checked before), so a 404 here is the revision
    if (error instanceof HubApiError && error.statusCode === 404) return undefined;
    throw error;
  }
  return files;
}

/**
 * The hub fetch (retries, backoff, time limit on each answer's start) for API calls; uploads get
 * the same retries without the time limit, since their answer starts only after the whole body.
 */
function pushFetch(
  hub: HubConfig,
  endpoint: string | undefined,
  signal: AbortSignal | undefined,
): typeof fetch {
  const common = {
    base: endpoint ?? "https://huggingface.co",
    // the library sets the Authorization header itself; never add the token to other hosts
    token: undefined,
    retries: hub.retries,
    backoffMs: hub.retry_backoff_s * 1000,
    signal,
  };
  const api = createHubFetch({ ...common, timeoutMs: hub.timeout_s * 1000 });
  const upload = createHubFetch({ ...common, timeoutMs: UPLOAD_TIMEOUT_MS });
  return ((input: string | URL | Request, init?: RequestInit) =>
    (init?.method === "PUT" ? upload : api)(input, init)) as typeof fetch;
}

function owner(repo: string): string {
  return repo.split("/")[0] ?? repo;
}
