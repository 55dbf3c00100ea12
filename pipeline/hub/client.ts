// The hub as the pipeline sees it: resolve a revision to a commit, list the files a source asks for,
// and open a file from a byte offset. All traffic goes through `@huggingface/hub`; this wrapper adds
// the endpoint/token/timeout/retry policy and turns the hub's answers into errors that say what to do.

import path from "node:path";
import {
  datasetInfo,
  downloadFile,
  type FileDownloadInfoOutput,
  fileDownloadInfo,
  HUB_URL,
  HubApiError,
  listFiles,
  modelInfo,
} from "@huggingface/hub";
import type { Logger } from "../log.js";
import { type HubConfig, resolveEndpoint } from "./config.js";
import { DirectoryHub } from "./directory-hub.js";
import {
  HubAccessError,
  HubNotFoundError,
  HubResponseError,
  HubUnreachableError,
  hubDetail,
  isNetworkFailure,
} from "./errors.js";
import { createHubFetch, directoryOfEndpoint, fileBase } from "./fetch.js";
import { globBase, globToRegExp, isGlob } from "./glob.js";

/** Datasets for the sources; models for the embedders (pipeline/embed). */
export type HubRepoType = "dataset" | "model";

/** A file of a dataset (or model) at a commit, as the hub lists it. */
export interface HubFile {
  repo: string;
  /** unset: a dataset */
  type?: HubRepoType | undefined;
  path: string;
  size: number;
  /** sha256 of the contents (the LFS oid), when the file is stored in LFS/Xet */
  sha256?: string | undefined;
  /** git blob id of the contents, when the file is a plain git file */
  gitOid?: string | undefined;
}

/** A file as `describe` found it on the hub; `open` needs it to fetch the bytes. */
export interface FileDescription {
  size: number;
  etag: string;
  /** the library's own answer (download URL, Xet details), handed back to it by `open` */
  info?: FileDownloadInfoOutput | undefined;
}

export interface HubClientOptions {
  signal?: AbortSignal | undefined;
  log?: Logger | undefined;
  env?: NodeJS.ProcessEnv | undefined;
}

/** What the public hub is called in messages when no endpoint is configured. */
const PUBLIC_HUB = "the public Hugging Face hub";

const FILE_ADVICE = "fix `files` of this source in the config, or pin a revision that has it";

function describeFile(file: HubFile, commit: string): string {
  return `${file.path} of ${file.type ?? "dataset"} ${file.repo} at commit ${commit}`;
}

export class HubClient {
  /** the endpoint as configured, for messages */
  readonly endpoint: string;
  readonly tokenEnv: string;
  readonly timeoutMs: number;
  readonly retries: number;
  readonly backoffMs: number;
  private readonly hubUrl: string | undefined;
  private readonly hasToken: boolean;
  private readonly fetch: typeof fetch;

  constructor(config: HubConfig, options: HubClientOptions = {}) {
    const env = options.env ?? process.env;
    const endpoint = resolveEndpoint(config, env);
    const token = env[config.token_env] || undefined;
    const directory = endpoint === undefined ? undefined : directoryOfEndpoint(endpoint);
    this.endpoint = endpoint ?? PUBLIC_HUB;
    this.tokenEnv = config.token_env;
    this.hasToken = token !== undefined;
    this.timeoutMs = config.timeout_s * 1000;
    this.retries = config.retries;
    this.backoffMs = config.retry_backoff_s * 1000;
    this.hubUrl = directory === undefined ? endpoint : fileBase(path.resolve(directory));
    this.fetch = createHubFetch({
      // without an endpoint the library uses its own default host: the token goes there and nowhere else
      base: this.hubUrl ?? HUB_URL,
      token,
      timeoutMs: this.timeoutMs,
      retries: this.retries,
      backoffMs: this.backoffMs,
      signal: options.signal,
      directory: directory === undefined ? undefined : new DirectoryHub(directory),
      onRetry: (attempt, reason) => options.log?.warn(`hub request failed (${reason}); retry ${attempt}`),
    });
  }

  /** The commit a revision (branch, tag or commit id) points to now. */
  async resolveCommit(repo: string, revision: string, type: HubRepoType = "dataset"): Promise<string> {
    const what = `${type} ${repo} at revision "${revision}"`;
    const info = await this.call(what, `check the ${type} name and \`revision\` in the config`, () =>
      type === "model"
        ? modelInfo({ name: repo, revision, additionalFields: ["sha"], ...this.params() })
        : datasetInfo({ name: repo, revision, additionalFields: ["sha"], ...this.params() }),
    );
    if (typeof info.sha !== "string" || info.sha === "") {
      throw new HubResponseError(what, "the revision info has no commit id (sha)");
    }
    return info.sha;
  }

  /**
   * The files of `repo` at `commit` matching `patterns` (exact paths or globs), in pattern order and,
   * within a glob, sorted by path. A pattern that matches nothing is an error: a silently empty
   * source would only surface stages later as a missing resource.
   */
  async listFiles(
    repo: string,
    commit: string,
    patterns: readonly string[],
    type: HubRepoType = "dataset",
  ): Promise<HubFile[]> {
    const out: HubFile[] = [];
    const seen = new Set<string>();
    const listings = new Map<string, HubFile[]>();
    for (const pattern of patterns) {
      const base = isGlob(pattern) ? globBase(pattern) : path.posix.dirname(pattern).replace(/^\.$/, "");
      let listing = listings.get(base);
      if (!listing) {
        listing = await this.list(repo, commit, base, type);
        listings.set(base, listing);
      }
      const regex = isGlob(pattern) ? globToRegExp(pattern) : undefined;
      const matches = listing
        .filter((f) => (regex ? regex.test(f.path) : f.path === pattern))
        .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
      if (matches.length === 0) {
        const nearby = listing.slice(0, 8).map((f) => f.path);
        throw new HubNotFoundError(
          `"${pattern}" in ${type} ${repo} at commit ${commit}`,
          `fix \`files\` of this source in the config${nearby.length ? `; files there include: ${nearby.join(", ")}` : ""}`,
          undefined,
          this.endpoint,
        );
      }
      for (const f of matches) {
        if (seen.has(f.path)) continue;
        seen.add(f.path);
        out.push(f);
      }
    }
    return out;
  }

  /**
   * What the hub says about `file` at `commit` now: its size and ETag, from a one-byte Range probe.
   * A size other than the listing's is an error: the bytes would never verify.
   */
  async describe(file: HubFile, commit: string): Promise<FileDescription> {
    if (file.size === 0) {
      // a Range request cannot probe an empty file (the hub answers 416); the listing says all there is
      return { size: 0, etag: file.sha256 ?? file.gitOid ?? "" };
    }
    const what = describeFile(file, commit);
    const info = await this.call(what, FILE_ADVICE, () =>
      fileDownloadInfo({ ...this.fileParams(file, commit), ...this.params() }),
    );
    if (!info) throw new HubNotFoundError(what, FILE_ADVICE, undefined, this.endpoint);
    if (info.size !== file.size) {
      throw new HubResponseError(
        what,
        `the listing says ${file.size} bytes but the file is ${info.size} bytes`,
      );
    }
    return { size: info.size, etag: info.etag, info };
  }

  /** The bytes of `file` from `offset` to its end, as described by `describe`. */
  async open(
    file: HubFile,
    commit: string,
    description: FileDescription,
    offset: number,
  ): Promise<ReadableStream<Uint8Array>> {
    const downloadInfo = description.info;
    if (!downloadInfo || offset >= description.size) return new Blob([]).stream();
    const what = describeFile(file, commit);
    const blob = await this.call(what, FILE_ADVICE, () =>
      downloadFile({ ...this.fileParams(file, commit), downloadInfo, ...this.params() }),
    );
    if (!blob) throw new HubNotFoundError(what, FILE_ADVICE, undefined, this.endpoint);
    return blob.slice(offset).stream();
  }

  private fileParams(file: HubFile, commit: string) {
    return { repo: { type: file.type ?? "dataset", name: file.repo }, path: file.path, revision: commit };
  }

  private async list(repo: string, commit: string, dir: string, type: HubRepoType): Promise<HubFile[]> {
    const what = `the file list of ${type} ${repo}${dir ? ` under ${dir}/` : ""} at commit ${commit}`;
    return this.call(what, `check the ${type} name and \`files\` in the config`, async () => {
      const files: HubFile[] = [];
      const entries = listFiles({
        repo: { type, name: repo },
        revision: commit,
        recursive: true,
        ...(dir ? { path: dir } : {}),
        ...this.params(),
      });
      for await (const entry of entries) {
        if (entry.type !== "file") continue;
        files.push({
          repo,
          ...(type === "dataset" ? {} : { type }),
          path: entry.path,
          size: entry.lfs?.size ?? entry.size,
          sha256: entry.lfs?.oid,
          gitOid: entry.lfs ? undefined : entry.oid,
        });
      }
      return files;
    });
  }

  private params(): { hubUrl?: string; fetch: typeof fetch } {
    return { ...(this.hubUrl ? { hubUrl: this.hubUrl } : {}), fetch: this.fetch };
  }

  /** Runs one hub call and turns its failure into a UserError that names `what` and says what to do. */
  private async call<T>(what: string, notFoundAdvice: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      if (error instanceof HubApiError) {
        const detail = hubDetail(error.message);
        if (error.statusCode === 401 || error.statusCode === 403) {
          throw new HubAccessError(what, error.statusCode, this.tokenEnv, this.hasToken, detail);
        }
        if (error.statusCode === 404) throw new HubNotFoundError(what, notFoundAdvice, detail, this.endpoint);
        throw new HubResponseError(what, `HTTP ${error.statusCode}: ${detail}`);
      }
      throw isNetworkFailure(error) ? new HubUnreachableError(this.endpoint, what, error) : error;
    }
  }
}
