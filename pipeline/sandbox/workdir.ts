// The private directories of one run: `work/` (the program's cwd, mounted at /work), `tmp/` (only
// used without isolation) and a meta dir elsewhere (resource usage written by the wrapper). Created empty for every
// request and removed after it; never shared between two runs.
import { constants as fsConstants } from "node:fs";
import {
  chmod,
  chown,
  lstat,
  mkdir,
  mkdtemp,
  open,
  readdir,
  readFile,
  rm,
  writeFile,
} from "node:fs/promises";
import { join, posix } from "node:path";
import { SandboxRequestError } from "./errors.js";
import { WORK_DIR } from "./isolation.js";

/**
 * The path relative to the work dir that `requested` names, or an error when it would land outside
 * it. Absolute paths are accepted when they are under the sandbox's work dir (`/work/x`).
 */
export function workRelativePath(requested: string): string {
  if (requested.includes("\0"))
    throw new SandboxRequestError(
      "invalid_request",
      `file path ${JSON.stringify(requested)} contains a NUL byte`,
    );
  let path = requested.replaceAll("\\", "/");
  if (path.startsWith("/")) {
    const normalized = posix.normalize(path);
    if (normalized !== WORK_DIR && !normalized.startsWith(`${WORK_DIR}/`)) {
      throw new SandboxRequestError(
        "invalid_request",
        `file path ${JSON.stringify(requested)} is outside the work dir: use a path relative to the program's working directory (or under ${WORK_DIR}/)`,
      );
    }
    path = normalized.slice(WORK_DIR.length + 1);
  }
  const normalized = posix.normalize(path);
  if (
    normalized === "" ||
    normalized === "." ||
    normalized === ".." ||
    normalized.startsWith("../") ||
    posix.isAbsolute(normalized)
  ) {
    throw new SandboxRequestError(
      "invalid_request",
      `file path ${JSON.stringify(requested)} would land outside the work dir: use a relative path without '..'`,
    );
  }
  return normalized;
}

export class RunDirectory {
  private constructor(
    readonly root: string,
    /** kept apart from the work dir so a program that fills its disk cannot lose its usage report */
    readonly meta: string,
    /** host uid that owns what the program may write, or null to keep our own */
    private readonly owner: number | null,
  ) {}

  get work(): string {
    return join(this.root, "work");
  }
  get tmp(): string {
    return join(this.root, "tmp");
  }

  static async create(parent: string, metaParent: string, owner: number | null): Promise<RunDirectory> {
    const root = await mkdtemp(join(parent, "run-"));
    const meta = await mkdtemp(join(metaParent, "meta-"));
    const dir = new RunDirectory(root, meta, owner);
    // bwrap may run as the slot's uid (userns mode) and must reach work/ and meta/ to mount them.
    await chmod(root, 0o711);
    await chmod(meta, 0o700);
    await dir.own(meta);
    for (const sub of [dir.work, dir.tmp]) {
      await mkdir(sub, { mode: 0o755 });
      await dir.own(sub);
    }
    return dir;
  }

  private async own(path: string): Promise<void> {
    if (this.owner !== null) await chown(path, this.owner, this.owner);
  }

  /** Writes one file of the request (base64 content) or the source code, creating its parent dirs. */
  async write(requested: string, content: Buffer | string): Promise<string> {
    const relative = workRelativePath(requested);
    const parts = relative.split("/");
    let dir = this.work;
    for (const part of parts.slice(0, -1)) {
      dir = join(dir, part);
      const existing = await lstat(dir).catch(() => null);
      if (existing === null) {
        await mkdir(dir, { mode: 0o755 });
        await this.own(dir);
      } else if (!existing.isDirectory()) {
        throw new SandboxRequestError(
          "invalid_request",
          `file path ${JSON.stringify(requested)} goes through ${relative
            .split("/")
            .slice(0, parts.indexOf(part) + 1)
            .join("/")}, which is a file`,
        );
      }
    }
    const target = join(this.work, relative);
    await writeFile(target, content, { mode: 0o644 });
    await this.own(target);
    return relative;
  }

  /**
   * Reads the files a request asked to fetch, as base64. A path that is (or goes through) a symbolic
   * link, is not a regular file, or is missing is left out: the program controls the work dir and
   * must not make us read anything outside it.
   */
  async fetch(paths: readonly string[], maxTotalBytes: number): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    let total = 0;
    for (const requested of paths) {
      let relative: string;
      try {
        relative = workRelativePath(requested);
      } catch {
        continue;
      }
      let dir = this.work;
      let safe = true;
      for (const part of relative.split("/").slice(0, -1)) {
        dir = join(dir, part);
        const stat = await lstat(dir).catch(() => null);
        if (stat === null || !stat.isDirectory()) {
          safe = false;
          break;
        }
      }
      if (!safe) continue;
      const handle = await open(
        join(this.work, relative),
        fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK,
      ).catch(() => null);
      if (handle === null) continue;
      try {
        const stat = await handle.stat();
        if (!stat.isFile() || total + stat.size > maxTotalBytes) continue;
        const content = await handle.readFile();
        total += content.length;
        out[requested] = content.toString("base64");
      } finally {
        await handle.close();
      }
    }
    return out;
  }

  /** Peak resident memory in KiB as reported by the wrapper, or null when it is missing or garbled. */
  async peakMemoryKb(): Promise<number | null> {
    const text = await readFile(join(this.meta, "usage"), "utf8").catch(() => "");
    const last = text.trim().split("\n").pop() ?? "";
    return /^\d+$/.test(last) ? Number(last) : null;
  }

  async remove(): Promise<void> {
    await rm(this.meta, { recursive: true, force: true }).catch(() => {});
    try {
      await rm(this.root, { recursive: true, force: true });
    } catch {
      // The program may have left dirs without write permission (only possible when it runs as us).
      await makeWritable(this.root);
      await rm(this.root, { recursive: true, force: true }).catch(() => {});
    }
  }
}

async function makeWritable(path: string): Promise<void> {
  const stat = await lstat(path).catch(() => null);
  if (stat === null || !stat.isDirectory()) return;
  await chmod(path, 0o700).catch(() => {});
  for (const entry of await readdir(path).catch(() => [])) await makeWritable(join(path, entry));
}
