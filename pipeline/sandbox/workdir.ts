// The private directories of one run: the program's cwd (mounted at /work) and, isolated, the dir
// mounted at /mnt; without isolation a scratch dir for TMPDIR instead. Created empty for every
// request and removed after it; never shared between two runs.

import { execFile } from "node:child_process";
import {
  chmodSync,
  chownSync,
  closeSync,
  fchownSync,
  constants as fsConstants,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  opendirSync,
  openSync,
  rmdirSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { lstat, open, rm } from "node:fs/promises";
import { join, posix } from "node:path";
import { promisify } from "node:util";
import { SandboxRequestError } from "./errors.js";
import { hostMntDir, MNT_DIR, WORK_DIR } from "./isolation.js";

const run = promisify(execFile);
const CHMOD = "/usr/bin/chmod";
const RM = "/usr/bin/rm";
/** Request file paths longer or deeper than this are refused: no real test needs them. */
const MAX_PATH_BYTES = 1024;
const MAX_PATH_DEPTH = 32;
/** A run dir with at most this many entries and no subdir is removed synchronously (see remove()). */
const SMALL_DIR_ENTRIES = 64;

/** Where a request's path lands: under the work dir or the /mnt dir, relative to it. */
export interface RunPath {
  area: "work" | "mnt";
  relative: string;
}

/**
 * Where `requested` lands, or an error when it would land outside the run's dirs. A relative path
 * is under the work dir; an absolute one must be under /work or /mnt (as the program sees them).
 */
export function runPath(requested: string): RunPath {
  if (requested.includes("\0"))
    throw new SandboxRequestError(
      "invalid_request",
      `file path ${JSON.stringify(requested)} contains a NUL byte`,
    );
  if (Buffer.byteLength(requested) > MAX_PATH_BYTES || requested.split(/[\\/]/).length > MAX_PATH_DEPTH) {
    throw new SandboxRequestError(
      "invalid_request",
      `file path ${JSON.stringify(requested.slice(0, 80))}... is longer than ${MAX_PATH_BYTES} bytes or deeper than ${MAX_PATH_DEPTH} dirs; use a shorter path`,
    );
  }
  let path = requested.replaceAll("\\", "/");
  let area: RunPath["area"] = "work";
  if (path.startsWith("/")) {
    const normalized = posix.normalize(path);
    const root = [WORK_DIR, MNT_DIR].find((dir) => normalized === dir || normalized.startsWith(`${dir}/`));
    if (root === undefined) {
      throw new SandboxRequestError(
        "invalid_request",
        `file path ${JSON.stringify(requested)} is outside the work dir: use a path relative to the program's working directory, or one under ${WORK_DIR}/ or ${MNT_DIR}/`,
      );
    }
    if (root === MNT_DIR) area = "mnt";
    path = normalized.slice(root.length + 1);
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
  return { area, relative: normalized };
}

export class RunDirectory {
  private constructor(
    /** the program's working directory (mounted at /work) */
    readonly work: string,
    /** scratch for TMPDIR/HOME when running without isolation, else null */
    readonly tmp: string | null,
    /** the dir mounted at /mnt when running isolated, else null */
    readonly mnt: string | null,
    /** host uid that owns what the program may write, or null to keep our own */
    private readonly owner: number | null,
  ) {}

  // Synchronous on purpose: a handful of metadata calls on a tmpfs take microseconds, while a round
  // trip through libuv's thread pool each costs far more per run than the calls themselves.
  static create(parent: string, owner: number | null, options: { withTmp: boolean }): RunDirectory {
    const work = mkdtempSync(join(parent, "run-"));
    const tmp = options.withTmp ? `${work}-tmp` : null;
    // an unisolated program has no /mnt of its own (it sees the host's)
    const mnt = options.withTmp ? null : hostMntDir(work);
    const dir = new RunDirectory(work, tmp, mnt, owner);
    // bwrap may run as the slot's uid (userns mode) and must reach the dirs to mount them.
    chmodSync(work, 0o755);
    dir.own(work);
    if (tmp) mkdirSync(tmp, { mode: 0o700 });
    if (mnt) {
      mkdirSync(mnt, { mode: 0o755 });
      dir.own(mnt);
    }
    return dir;
  }

  private own(path: string): void {
    if (this.owner !== null) chownSync(path, this.owner, this.owner);
  }

  /** Where a request's path lands: the host dir and the path in it, or an error where there is none. */
  private land(requested: string): RunPath & { base: string } {
    const path = runPath(requested);
    if (path.area === "work") return { ...path, base: this.work };
    if (this.mnt) return { ...path, base: this.mnt };
    throw new SandboxRequestError(
      "invalid_request",
      `file path ${JSON.stringify(requested)} is under ${MNT_DIR}, which only an isolated run has (sandbox.isolation is none): use a relative path`,
    );
  }

  /**
   * Writes one file of the request (base64 content) or the source code, creating its parent dirs.
   * Returns its path relative to the work dir (the source's), or as requested where it is under /mnt.
   */
  write(requested: string, content: Buffer | string): string {
    const { base, area, relative } = this.land(requested);
    try {
      this.place(requested, base, relative, content);
    } catch (error) {
      if (error instanceof SandboxRequestError) throw error;
      const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      const advice =
        code === "ENOSPC"
          ? "the request's files do not fit in the work dir (sandbox.limits.work_dir_mb)"
          : "a path collides with another file or dir of the request, or is too long";
      throw new SandboxRequestError(
        "invalid_request",
        `cannot write file ${JSON.stringify(requested)} into the work dir (${code}): ${advice}`,
      );
    }
    return area === "work" ? relative : posix.join(MNT_DIR, relative);
  }

  private place(requested: string, base: string, relative: string, content: Buffer | string): void {
    const parts = relative.split("/");
    let dir = base;
    for (const [i, part] of parts.slice(0, -1).entries()) {
      dir = join(dir, part);
      const existing = lstatSync(dir, { throwIfNoEntry: false });
      if (existing === undefined) {
        mkdirSync(dir, { mode: 0o755 });
        this.own(dir);
      } else if (!existing.isDirectory()) {
        throw new SandboxRequestError(
          "invalid_request",
          `file path ${JSON.stringify(requested)} goes through ${parts.slice(0, i + 1).join("/")}, which is a file`,
        );
      }
    }
    const target = join(base, relative);
    // never through a link, should one ever be there
    const fd = openSync(
      target,
      fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_TRUNC | fsConstants.O_NOFOLLOW,
      0o644,
    );
    try {
      writeFileSync(fd, content);
      if (this.owner !== null) fchownSync(fd, this.owner, this.owner);
    } finally {
      closeSync(fd);
    }
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
      let landed: RunPath & { base: string };
      try {
        landed = this.land(requested);
      } catch {
        continue;
      }
      if (!(await realDirs(landed.base, landed.relative))) continue;
      const handle = await open(
        join(landed.base, landed.relative),
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

  async remove(): Promise<void> {
    if (this.tmp && !removeSmallDir(this.tmp)) await removeTree(this.tmp);
    if (this.mnt && !removeSmallDir(this.mnt)) await removeTree(this.mnt);
    if (!removeSmallDir(this.work)) await removeTree(this.work);
  }
}

/** Whether every dir on the way from `base` to `relative` is a real dir (no link, nothing missing). */
async function realDirs(base: string, relative: string): Promise<boolean> {
  let dir = base;
  for (const part of relative.split("/").slice(0, -1)) {
    dir = join(dir, part);
    if (!(await lstat(dir).catch(() => null))?.isDirectory()) return false;
  }
  return true;
}

/**
 * Removes a dir that holds only a few files, synchronously: what nearly every run leaves (its source
 * and perhaps an output file). A few unlinks on a tmpfs take microseconds, while fs.promises.rm's
 * round trips through libuv's thread pool cost far more CPU than the calls themselves.
 * False when the dir is anything else (subdirs, many entries, an entry that will not go): the
 * caller removes it the general way.
 */
function removeSmallDir(path: string): boolean {
  try {
    const names: string[] = [];
    // read entry by entry: a dir of a million files is left to the general way after 65 of them
    const dir = opendirSync(path);
    try {
      for (let entry = dir.readSync(); entry !== null; entry = dir.readSync()) {
        if (entry.isDirectory() || names.length === SMALL_DIR_ENTRIES) return false;
        names.push(entry.name);
      }
    } finally {
      dir.closeSync();
    }
    for (const name of names) unlinkSync(join(path, name));
    rmdirSync(path);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" && !lstatSync(path, { throwIfNoEntry: false });
  }
}

async function removeTree(path: string): Promise<void> {
  try {
    await rm(path, { recursive: true, force: true });
    return;
  } catch {
    // The program may have left dirs without write permission (possible when it runs as us), or
    // nested them deeper than a path can name, which Node's rm cannot walk. GNU chmod and rm walk
    // any depth (fts, relative to open dirs); anything left would pile up run after run.
  }
  await run(CHMOD, ["-R", "u+rwX", "--", path]).catch(() => {});
  await run(RM, ["-rf", "--one-file-system", "--", path]).catch(() => {});
}
