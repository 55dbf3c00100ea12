// The write side of the local test hub: the endpoints `@huggingface/hub` calls to create a repository,
// a branch, and to commit (listed at `handle`). The default branch lives where the read side serves
// it, so a push is downloadable through the same endpoints; other branches live under the storage
// directory, each with a DirectoryHub of its own. LFS objects are kept by sha256 whether a commit used
// them or not, as on the hub, so an interrupted commit can skip them later.

import { createHash, randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { cp, mkdir, readdir, rename, rm, stat, writeFile } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import path from "node:path";
import { DirectoryHub, LFS_PATTERN } from "../../pipeline/hub/directory-hub.js";

export interface RepoState {
  type: "dataset" | "model";
  private: boolean;
  /** branches other than main */
  branches: Set<string>;
}

export interface CommitRecord {
  repo: string;
  branch: string;
  title: string;
  oid: string;
  /** paths added or updated, and how: inline (base64 in the commit) or an LFS object */
  files: { path: string; kind: "inline" | "lfs" }[];
  deleted: string[];
}

/** What the server logs per request; the write side fills `bytesIn`. */
export interface WriteLog {
  status: number;
  /** request body bytes received */
  bytesIn: number;
}

/** How to mistreat one upload: cut the connection after `afterBytes`, or take the body slowly. */
export interface UploadFault {
  afterBytes?: number;
  bytesPerSecond?: number;
}

const MAX_INLINE_BYTES = 10 * 1024 * 1024;

export class HubWrites {
  readonly repos = new Map<string, RepoState>();
  readonly commits: CommitRecord[] = [];
  private readonly tickets = new Map<string, { oid: string; size: number }>();
  private readonly branchHubs = new Map<string, DirectoryHub>();

  constructor(
    private readonly root: string,
    private readonly storage: string,
  ) {}

  private lfsPath(oid: string): string {
    return path.join(this.storage, "lfs", oid);
  }

  /** Whether the hub stores this LFS object (committed or not). */
  async hasObject(oid: string): Promise<boolean> {
    return (await stat(this.lfsPath(oid)).catch(() => undefined))?.isFile() ?? false;
  }

  private branchRoot(branch: string): string {
    return branch === "main" ? this.root : path.join(this.storage, "branches", encodeURIComponent(branch));
  }

  private hubFor(branch: string): DirectoryHub {
    let hub = this.branchHubs.get(branch);
    if (!hub) {
      hub = new DirectoryHub(this.branchRoot(branch));
      this.branchHubs.set(branch, hub);
    }
    return hub;
  }

  private async repoExists(repo: string): Promise<boolean> {
    return (await stat(path.join(this.root, repo)).catch(() => undefined))?.isDirectory() ?? false;
  }

  private state(repo: string): RepoState {
    let state = this.repos.get(repo);
    if (!state) {
      state = { type: "dataset", private: false, branches: new Set() };
      this.repos.set(repo, state);
    }
    return state;
  }

  /** The repository and revision a read names (revision info, tree, resolve), if it names one. */
  private readTarget(url: string): { repo: string; revision: string } | undefined {
    const segments = new URL(url, "http://hub.local").pathname
      .split("/")
      .filter(Boolean)
      .map(decodeURIComponent);
    if (segments[0] === "api" && segments.length >= 6 && ["revision", "tree"].includes(segments[4]!)) {
      return { repo: `${segments[2]}/${segments[3]}`, revision: segments[5]! };
    }
    if (segments[0] === "datasets" && segments[3] === "resolve" && segments.length >= 5) {
      return { repo: `${segments[1]}/${segments[2]}`, revision: segments[4]! };
    }
    if (segments[2] === "resolve" && segments.length >= 4) {
      return { repo: `${segments[0]}/${segments[1]}`, revision: segments[3]! };
    }
    return undefined;
  }

  /**
   * The DirectoryHub answering a read of a pushed branch other than main (by name, or by its head
   * commit id); undefined for everything the main directory answers.
   */
  async readerFor(url: string): Promise<DirectoryHub | undefined> {
    const target = this.readTarget(url);
    const repo = target?.repo;
    const revision = target?.revision;
    const state = repo ? this.repos.get(repo) : undefined;
    if (!repo || !state || !revision) return undefined;
    if (state.branches.has(revision)) return this.hubFor(revision);
    if (/^[0-9a-f]{40}$/.test(revision)) {
      for (const branch of state.branches) {
        if ((await this.hubFor(branch).snapshot(repo))?.commit === revision) return this.hubFor(branch);
      }
    }
    return undefined;
  }

  // The endpoints, as the hub speaks them:
  //   POST /api/repos/create                              {name, organization, type, visibility}
  //   GET  /api/{datasets|models}/OWNER/NAME              repository info (`repoExists`)
  //   POST /api/{datasets|models}/OWNER/NAME/branch/B     {startingPoint?, emptyBranch?, overwrite?}
  //   POST /api/{datasets|models}/OWNER/NAME/preupload/B  {files: [{path, size, sample}]} -> uploadMode
  //   POST /[datasets/]OWNER/NAME.git/info/lfs/objects/batch   git-lfs batch API, "basic" transfer:
  //        an object the hub already stores gets no upload action (the client then sends nothing)
  //   PUT  <href from the batch answer>                   the object's bytes (a presigned URL: no token)
  //   POST /api/{datasets|models}/OWNER/NAME/commit/B     NDJSON: header, file (base64), lfsFile, deletedFile
  /** Answers a write request (and repository info); false when the request is not one of them. */
  async handle(
    req: IncomingMessage,
    res: ServerResponse,
    log: WriteLog,
    fault?: UploadFault,
  ): Promise<boolean> {
    const url = new URL(req.url ?? "/", "http://hub.local");
    const segments = url.pathname.split("/").filter(Boolean).map(decodeURIComponent);
    const method = req.method ?? "GET";
    const base = `http://${req.headers.host}`;
    if (segments.some((s) => s === ".." || s.includes("\0"))) return false;
    // a repository created here has the branches made here: any other name is unknown, as on the hub
    const target = method === "GET" ? this.readTarget(req.url ?? "/") : undefined;
    const pushed = target ? this.repos.get(target.repo) : undefined;
    if (
      target &&
      pushed &&
      target.revision !== "main" &&
      !pushed.branches.has(target.revision) &&
      !/^[0-9a-f]{40}$/.test(target.revision)
    ) {
      return this.notFound(res, log, "RevisionNotFound", `Invalid rev id: ${target.revision}`);
    }

    if (method === "PUT" && segments[0] === "lfs-upload" && segments.length === 2) {
      await this.receiveObject(req, res, log, segments[1]!, url.searchParams.get("ticket") ?? "", fault);
      return true;
    }
    if (
      method === "POST" &&
      /\.git$/.test(segments[segments.length - 5] ?? "") &&
      url.pathname.endsWith("/info/lfs/objects/batch")
    ) {
      const body = JSON.parse(await readBody(req, log)) as {
        operation: string;
        objects: { oid: string; size: number }[];
      };
      return this.reply(res, log, 200, await this.lfsBatch(body, base), "application/vnd.git-lfs+json");
    }
    if (method === "POST" && url.pathname === "/api/repos/create") {
      const body = JSON.parse(await readBody(req, log)) as Record<string, unknown>;
      return this.createRepo(res, log, body, base);
    }
    if (segments[0] !== "api" || (segments[1] !== "datasets" && segments[1] !== "models")) return false;
    const repo = `${segments[2]}/${segments[3]}`;
    if (method === "GET" && segments.length === 4) {
      if (!(await this.repoExists(repo)))
        return this.notFound(res, log, "RepoNotFound", `Repository not found: ${repo}`);
      const state = this.repos.get(repo);
      return this.reply(res, log, 200, { id: repo, private: state?.private ?? false, likes: 0 });
    }
    if (method !== "POST" || segments.length !== 6) return false;
    const [, , , , verb, branch] = segments as [string, string, string, string, string, string];
    if (!(await this.repoExists(repo)))
      return this.notFound(res, log, "RepoNotFound", `Repository not found: ${repo}`);
    if (verb === "branch") {
      const body = JSON.parse((await readBody(req, log)) || "{}") as Record<string, unknown>;
      return this.createBranch(res, log, repo, branch, body);
    }
    if (branch !== "main" && !this.state(repo).branches.has(branch)) {
      return this.notFound(res, log, "RevisionNotFound", `Invalid rev id: ${branch}`);
    }
    if (verb === "preupload") {
      const body = JSON.parse(await readBody(req, log)) as { files: { path: string; size: number }[] };
      const files = body.files.map((f) => ({
        path: f.path,
        uploadMode: LFS_PATTERN.test(f.path) || f.size > MAX_INLINE_BYTES ? "lfs" : "regular",
        shouldIgnore: false,
      }));
      return this.reply(res, log, 200, { files });
    }
    if (verb === "commit") return this.commit(res, log, repo, branch, await readBody(req, log), base);
    return false;
  }

  private async createRepo(res: ServerResponse, log: WriteLog, body: Record<string, unknown>, base: string) {
    const name = String(body.name ?? "");
    const owner = String(body.organization ?? "");
    if (!/^[\w.-]+$/.test(name) || !/^[\w.-]+$/.test(owner)) {
      return this.reply(res, log, 400, { error: `invalid repository name: ${owner}/${name}` });
    }
    const repo = `${owner}/${name}`;
    const type = body.type === "dataset" ? "dataset" : "model";
    const url = `${base}/${type === "dataset" ? "datasets/" : ""}${repo}`;
    if (await this.repoExists(repo)) {
      return this.reply(res, log, 409, { error: `You already created this ${type} repo`, url });
    }
    await mkdir(path.join(this.root, repo), { recursive: true });
    this.repos.set(repo, {
      type,
      private: body.visibility === "private" || body.private === true,
      branches: new Set(),
    });
    return this.reply(res, log, 200, { url, name: repo, id: randomBytes(12).toString("hex") });
  }

  private async createBranch(
    res: ServerResponse,
    log: WriteLog,
    repo: string,
    branch: string,
    body: Record<string, unknown>,
  ) {
    const state = this.state(repo);
    if ((branch === "main" || state.branches.has(branch)) && body.overwrite !== true) {
      return this.reply(res, log, 409, { error: `Reference already exists: refs/heads/${branch}` });
    }
    const from = typeof body.startingPoint === "string" ? body.startingPoint : "main";
    if (from !== "main" && !state.branches.has(from)) {
      return this.notFound(res, log, "RevisionNotFound", `Invalid rev id: ${from}`);
    }
    const target = path.join(this.branchRoot(branch), repo);
    await rm(target, { recursive: true, force: true });
    await mkdir(target, { recursive: true });
    if (body.emptyBranch !== true) {
      await cp(path.join(this.branchRoot(from), repo), target, {
        recursive: true,
        filter: (source) => !path.basename(source).startsWith("."),
      });
    }
    state.branches.add(branch);
    return this.reply(res, log, 200, {});
  }

  private async lfsBatch(
    body: { operation: string; objects: { oid: string; size: number }[] },
    base: string,
  ) {
    const objects = [];
    for (const { oid, size } of body.objects) {
      if (!/^[0-9a-f]{64}$/.test(oid) || !Number.isInteger(size) || size < 0) {
        objects.push({ oid, size, error: { code: 422, message: "invalid object id or size" } });
      } else if (await this.hasObject(oid)) {
        objects.push({ oid, size, authenticated: true });
      } else {
        const ticket = randomBytes(16).toString("hex");
        this.tickets.set(ticket, { oid, size });
        const href = `${base}/lfs-upload/${oid}?ticket=${ticket}`;
        objects.push({ oid, size, authenticated: true, actions: { upload: { href, expires_in: 3600 } } });
      }
    }
    return { transfer: "basic", objects };
  }

  /** Stores an upload under its sha256 once its bytes check out; a cut or a mismatch stores nothing. */
  private async receiveObject(
    req: IncomingMessage,
    res: ServerResponse,
    log: WriteLog,
    oid: string,
    ticket: string,
    fault: UploadFault | undefined,
  ): Promise<void> {
    const expected = this.tickets.get(ticket);
    if (!expected || expected.oid !== oid) {
      this.reply(res, log, 403, { error: "upload URL is not valid for this object" });
      return;
    }
    const dir = path.join(this.storage, "lfs");
    await mkdir(dir, { recursive: true });
    const temp = path.join(dir, `incoming-${randomBytes(6).toString("hex")}`);
    const out = createWriteStream(temp);
    // a cut destroys the stream with writes pending; their errors are expected and the temp file goes
    out.on("error", () => {});
    const hash = createHash("sha256");
    let received = 0;
    try {
      for await (const chunk of req) {
        const piece = chunk as Buffer;
        if (fault?.afterBytes !== undefined && received + piece.length >= fault.afterBytes) {
          log.bytesIn += fault.afterBytes - received;
          req.socket.destroy();
          throw new Error("connection cut by an injected fault");
        }
        received += piece.length;
        log.bytesIn += piece.length;
        hash.update(piece);
        if (!out.write(piece)) await new Promise<void>((r) => out.once("drain", () => r()));
        // reading slowly fills the socket's buffers, and TCP slows the sender down to this rate
        if (fault?.bytesPerSecond)
          await new Promise((r) => setTimeout(r, (1000 * piece.length) / fault.bytesPerSecond!));
      }
      await new Promise<void>((resolve, reject) =>
        out.end((error?: Error | null) => (error ? reject(error) : resolve())),
      );
      if (received !== expected.size || hash.digest("hex") !== oid) {
        await rm(temp, { force: true });
        this.reply(res, log, 400, {
          error: `the bytes received do not match object ${oid} (${received} bytes)`,
        });
        return;
      }
      await rename(temp, this.lfsPath(oid));
      this.tickets.delete(ticket);
      this.reply(res, log, 200, {});
    } catch (error) {
      out.destroy();
      await rm(temp, { force: true });
      if (!res.destroyed && !res.headersSent) this.reply(res, log, 400, { error: String(error) });
    }
  }

  private async commit(
    res: ServerResponse,
    log: WriteLog,
    repo: string,
    branch: string,
    ndjson: string,
    base: string,
  ) {
    const lines = ndjson.split("\n").filter((l) => l.trim() !== "");
    const record: CommitRecord = { repo, branch, title: "", oid: "", files: [], deleted: [] };
    const writes: { path: string; content: Buffer | { lfs: string } }[] = [];
    const hub = this.hubFor(branch);
    for (const line of lines) {
      const { key, value } = JSON.parse(line) as { key: string; value: Record<string, unknown> };
      if (key === "header") {
        record.title = String(value.summary ?? "");
        const parent = value.parentCommit;
        const head = (await hub.snapshot(repo))?.commit;
        if (typeof parent === "string" && parent !== head) {
          return this.reply(res, log, 412, {
            error: `parent commit ${parent} is not the head of ${branch} (${head})`,
          });
        }
        continue;
      }
      const file = String(value.path ?? "");
      if (file === "" || file.startsWith("/") || file.split("/").some((p) => p === ".." || p === "")) {
        return this.reply(res, log, 400, { error: `invalid path in commit: ${file}` });
      }
      if (key === "file") {
        writes.push({ path: file, content: Buffer.from(String(value.content ?? ""), "base64") });
        record.files.push({ path: file, kind: "inline" });
      } else if (key === "lfsFile") {
        const oid = String(value.oid ?? "");
        if (!(await this.hasObject(oid)) || (await stat(this.lfsPath(oid))).size !== value.size) {
          return this.reply(res, log, 422, { error: `LFS object ${oid} for ${file} was never uploaded` });
        }
        writes.push({ path: file, content: { lfs: oid } });
        record.files.push({ path: file, kind: "lfs" });
      } else if (key === "deletedFile") {
        record.deleted.push(file);
      } else {
        return this.reply(res, log, 400, { error: `unknown commit operation: ${key}` });
      }
    }
    const dir = path.join(this.branchRoot(branch), repo);
    for (const w of writes) {
      const target = path.join(dir, w.path);
      await mkdir(path.dirname(target), { recursive: true });
      const temp = `${target}.incoming`;
      if (Buffer.isBuffer(w.content)) await writeFile(temp, w.content);
      else await cp(this.lfsPath(w.content.lfs), temp);
      await rename(temp, target);
    }
    for (const file of record.deleted) await rm(path.join(dir, file), { force: true });
    record.oid = (await hub.snapshot(repo))?.commit ?? "";
    this.commits.push(record);
    return this.reply(res, log, 200, {
      success: true,
      commitOid: record.oid,
      commitUrl: `${base}/datasets/${repo}/commit/${record.oid}`,
      hookOutput: "",
    });
  }

  private notFound(res: ServerResponse, log: WriteLog, code: string, message: string): true {
    log.status = 404;
    res.writeHead(404, { "content-type": "application/json", "x-error-code": code });
    res.end(JSON.stringify({ error: message }));
    return true;
  }

  private reply(
    res: ServerResponse,
    log: WriteLog,
    status: number,
    body: unknown,
    type = "application/json",
  ): true {
    log.status = status;
    res.writeHead(status, { "content-type": type });
    res.end(JSON.stringify(body));
    return true;
  }
}

async function readBody(req: IncomingMessage, log: WriteLog): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    chunks.push(chunk as Buffer);
    log.bytesIn += (chunk as Buffer).length;
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** Every file below `dir`, relative, for assertions. */
export async function filesBelow(dir: string, prefix = ""): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(path.join(dir, prefix), { withFileTypes: true }).catch(() => [])) {
    const relative = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...(await filesBelow(dir, relative)));
    else out.push(relative);
  }
  return out.sort();
}
