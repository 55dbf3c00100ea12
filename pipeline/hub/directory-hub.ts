// A local directory (`<owner>/<name>/<path>`) answered in the hub's own protocol, so the same client
// code (`@huggingface/hub`, resume, verification) runs offline (`hub.endpoint: file:DIR`) and against
// the test hub in test/support. Only what the client calls is spoken. Every dataset has one revision:
// any branch or tag resolves to it, and a commit id must match the id derived from the files'
// contents (so a pinned commit still means "these exact bytes").

import { createHash } from "node:crypto";
import { stat } from "node:fs/promises";
import path from "node:path";
import { describeLocalFile, walk } from "./local-files.js";

export interface HubRequest {
  method: string;
  /** path and query after the endpoint, e.g. `/api/datasets/o/n/revision/main?expand=sha` */
  url: string;
  range?: string | undefined;
}

export interface HubResponse {
  status: number;
  headers: Record<string, string>;
  /** JSON text, or a byte range of a file (inclusive `end`) */
  body?: string | { file: string; start: number; end: number };
}

interface FileEntry {
  path: string;
  size: number;
  /** sha256 of the contents: the LFS oid, and the ETag of an LFS file */
  sha256: string;
  /** git blob id: of the contents for a regular file, of the LFS pointer for an LFS file */
  oid: string;
  lfs: { oid: string; size: number; pointerSize: number } | undefined;
  mtimeMs: number;
}

interface RepoSnapshot {
  commit: string;
  files: FileEntry[];
}

/** Data files go through LFS on the real hub; small text files such as README.md are plain git blobs. */
export const LFS_PATTERN = /\.(jsonl|json|parquet|arrow|gz|zst|bz2|xz|zip|tar|onnx|onnx_data|safetensors)$/i;

/** The git blob id of `content`: sha1 over `blob <size>\0<bytes>`. */
function gitBlobId(content: Buffer): string {
  return createHash("sha1").update(`blob ${content.length}\0`).update(content).digest("hex");
}

function lfsPointer(sha256: string, size: number): string {
  return `version https://git-lfs.github.com/spec/v1\noid sha256:${sha256}\nsize ${size}\n`;
}

function json(status: number, value: unknown, headers: Record<string, string> = {}): HubResponse {
  return {
    status,
    headers: { "content-type": "application/json; charset=utf-8", ...headers },
    body: JSON.stringify(value),
  };
}

function notFound(code: "RepoNotFound" | "RevisionNotFound" | "EntryNotFound", message: string): HubResponse {
  return json(404, { error: message }, { "x-error-code": code });
}

export class DirectoryHub {
  readonly root: string;
  private readonly cache = new Map<string, FileEntry>();

  constructor(root: string) {
    this.root = path.resolve(root);
  }

  async handle(request: HubRequest): Promise<HubResponse> {
    const url = new URL(request.url, "http://hub.local");
    const segments = url.pathname
      .split("/")
      .filter((s) => s !== "")
      .map(decodeURIComponent);
    if (segments.some((s) => s === ".." || s.includes("\0"))) return json(400, { error: "bad path" });
    if (request.method !== "GET" && request.method !== "HEAD") return json(405, { error: "read-only hub" });

    // /api/datasets/{owner}/{name}/revision/{rev}
    // /api/datasets/{owner}/{name}/tree/{rev}/{path...}
    // (and the same under /api/models/: models and datasets share the directory's namespace)
    if (
      segments[0] === "api" &&
      (segments[1] === "datasets" || segments[1] === "models") &&
      segments.length >= 6
    ) {
      const [, , owner, name, verb, ...rest] = segments;
      const repo = `${owner}/${name}`;
      if (verb === "revision") return this.revisionInfo(repo, rest.join("/"));
      if (verb === "tree") return this.tree(repo, rest[0]!, rest.slice(1).join("/"), url.searchParams);
    }
    // /datasets/{owner}/{name}/resolve/{rev}/{path...}
    if (segments[0] === "datasets" && segments[3] === "resolve" && segments.length >= 6) {
      const [, owner, name, , rev, ...rest] = segments;
      return this.resolve(`${owner}/${name}`, rev!, rest.join("/"), request.range);
    }
    // /{owner}/{name}/resolve/{rev}/{path...}: a model's file
    if (segments[2] === "resolve" && segments.length >= 5) {
      const [owner, name, , rev, ...rest] = segments;
      return this.resolve(`${owner}/${name}`, rev!, rest.join("/"), request.range);
    }
    return json(404, { error: `no such endpoint: ${url.pathname}` });
  }

  /** The snapshot of one dataset directory, or undefined when it does not exist. */
  async snapshot(repo: string): Promise<RepoSnapshot | undefined> {
    const dir = path.join(this.root, repo);
    const info = await stat(dir).catch(() => undefined);
    if (!info?.isDirectory()) return undefined;
    const files: FileEntry[] = [];
    // dot-directories (.cache, .git) are local bookkeeping, not dataset contents
    for (const file of walk(dir, () => true)) files.push(await this.describe(dir, path.relative(dir, file)));
    files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    const digest = createHash("sha1");
    for (const f of files) digest.update(`${f.path}\0${f.size}\0${f.sha256}\n`);
    return { commit: digest.digest("hex"), files };
  }

  private async describe(dir: string, relative: string): Promise<FileEntry> {
    const absolute = path.join(dir, relative);
    const info = await stat(absolute);
    const cached = this.cache.get(absolute);
    if (cached && cached.size === info.size && cached.mtimeMs === info.mtimeMs) return cached;
    const { sha256, gitOid } = await describeLocalFile(absolute, relative);
    const isLfs = LFS_PATTERN.test(relative);
    const pointer = lfsPointer(sha256, info.size);
    const entry: FileEntry = {
      path: relative,
      size: info.size,
      sha256,
      oid: isLfs ? gitBlobId(Buffer.from(pointer)) : gitOid,
      lfs: isLfs ? { oid: sha256, size: info.size, pointerSize: Buffer.byteLength(pointer) } : undefined,
      mtimeMs: info.mtimeMs,
    };
    this.cache.set(absolute, entry);
    return entry;
  }

  private async checkout(repo: string, revision: string): Promise<RepoSnapshot | HubResponse> {
    const snap = await this.snapshot(repo);
    if (!snap) return notFound("RepoNotFound", `Repository not found: ${repo}`);
    if (/^[0-9a-f]{40}$/.test(revision) && revision !== snap.commit) {
      return notFound("RevisionNotFound", `Invalid rev id: ${revision}`);
    }
    return snap;
  }

  private async revisionInfo(repo: string, revision: string): Promise<HubResponse> {
    const snap = await this.checkout(repo, revision);
    if ("status" in snap) return snap;
    return json(200, {
      _id: snap.commit.slice(0, 24),
      id: repo,
      sha: snap.commit,
      private: false,
      gated: false,
      downloads: 0,
      likes: 0,
      lastModified: new Date(0).toISOString(),
      siblings: snap.files.map((f) => ({ rfilename: f.path })),
    });
  }

  private async tree(
    repo: string,
    revision: string,
    dir: string,
    query: URLSearchParams,
  ): Promise<HubResponse> {
    const snap = await this.checkout(repo, revision);
    if ("status" in snap) return snap;
    const prefix = dir === "" ? "" : `${dir}/`;
    const recursive = query.get("recursive") === "true";
    const below = snap.files.filter((f) => f.path.startsWith(prefix));
    if (below.length === 0 && dir !== "")
      return notFound("EntryNotFound", `${dir} does not exist on "${revision}"`);
    const entries: unknown[] = [];
    const dirs = new Set<string>();
    for (const f of below) {
      const rest = f.path.slice(prefix.length);
      const parts = rest.split("/");
      for (let depth = 1; depth < parts.length && (recursive || depth === 1); depth++) {
        const d = prefix + parts.slice(0, depth).join("/");
        if (!dirs.has(d)) {
          dirs.add(d);
          entries.push({ type: "directory", oid: gitBlobId(Buffer.from(d)), size: 0, path: d });
        }
      }
      if (recursive || parts.length === 1) {
        entries.push({
          type: "file",
          oid: f.oid,
          size: f.size,
          path: f.path,
          ...(f.lfs ? { lfs: f.lfs } : {}),
        });
      }
    }
    return json(200, entries);
  }

  private async resolve(repo: string, revision: string, file: string, range?: string): Promise<HubResponse> {
    const snap = await this.checkout(repo, revision);
    if ("status" in snap) return snap;
    const entry = snap.files.find((f) => f.path === file);
    if (!entry) return notFound("EntryNotFound", `Entry not found: ${file}`);
    const etag = `"${entry.lfs ? entry.sha256 : entry.oid}"`;
    const headers: Record<string, string> = {
      "accept-ranges": "bytes",
      etag,
      "x-repo-commit": snap.commit,
      "content-type": "application/octet-stream",
      ...(entry.lfs ? { "x-linked-etag": etag, "x-linked-size": String(entry.size) } : {}),
    };
    const absolute = path.join(this.root, repo, file);
    const requested = parseRange(range, entry.size);
    if (requested === "unsatisfiable") {
      return { status: 416, headers: { ...headers, "content-range": `bytes */${entry.size}` } };
    }
    if (requested === undefined) {
      const body = entry.size === 0 ? "" : { file: absolute, start: 0, end: entry.size - 1 };
      return { status: 200, headers: { ...headers, "content-length": String(entry.size) }, body };
    }
    const { start, end } = requested;
    return {
      status: 206,
      headers: {
        ...headers,
        "content-length": String(end - start + 1),
        "content-range": `bytes ${start}-${end}/${entry.size}`,
      },
      body: { file: absolute, start, end },
    };
  }
}

/** `bytes=a-b`, `bytes=a-` or `bytes=-n` (a single range, as the client sends). */
export function parseRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | "unsatisfiable" | undefined {
  const match = header?.match(/^bytes=(\d*)-(\d*)$/);
  if (!match) return undefined;
  const [, from, to] = match;
  let start: number;
  let end: number;
  if (from === "") {
    const suffix = Number(to);
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(from);
    end = to === "" ? size - 1 : Math.min(Number(to), size - 1);
  }
  if (start >= size || start > end) return "unsatisfiable";
  return { start, end };
}
