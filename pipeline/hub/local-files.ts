// The files of a local directory as the hub would list them after an upload: size, the sha256 of the
// bytes (an LFS or Xet file's `lfs.oid`) and the git blob id (a plain git file's `oid`), both from
// one read, so a push can tell which files the hub already has without sending a byte.
import { createHash } from "node:crypto";
import { createReadStream, readdirSync, statSync } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import { globBase, globToRegExp, isGlob } from "./glob.js";

export interface LocalFile {
  /** path inside the directory, `/`-separated: the path in the repository */
  path: string;
  absolute: string;
  size: number;
  sha256: string;
  gitOid: string;
}

/** The remote side of the comparison: a file entry of the hub's tree listing. */
export interface RemoteFile {
  path: string;
  /** git blob id (of the LFS pointer, for an LFS file) */
  oid?: string | undefined;
  lfs?: { oid: string; size: number } | undefined;
}

export async function describeLocalFile(absolute: string, relative: string): Promise<LocalFile> {
  const { size } = await stat(absolute);
  const sha256 = createHash("sha256");
  const sha1 = createHash("sha1").update(`blob ${size}\0`);
  for await (const chunk of createReadStream(absolute, { highWaterMark: 1 << 20 })) {
    sha256.update(chunk as Buffer);
    sha1.update(chunk as Buffer);
  }
  return { path: relative, absolute, size, sha256: sha256.digest("hex"), gitOid: sha1.digest("hex") };
}

/**
 * The regular files directly in `dir` that `include` accepts, sorted by path. Subdirectories are not
 * entered: a stage directory keeps its bookkeeping (parts/, work/) in them.
 */
export async function listLocalFiles(dir: string, include: (name: string) => boolean): Promise<LocalFile[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const names = entries
    .filter((e) => e.isFile() && include(e.name))
    .map((e) => e.name)
    .sort();
  const files: LocalFile[] = [];
  for (const name of names) files.push(await describeLocalFile(path.join(dir, name), name));
  return files;
}

/** Whether the hub's entry holds exactly the local bytes (LFS files by sha256, git files by blob id). */
export function sameContent(local: LocalFile, remote: RemoteFile): boolean {
  if (remote.lfs) return remote.lfs.oid === local.sha256 && remote.lfs.size === local.size;
  return remote.oid === local.gitOid;
}

/**
 * The files a local source's `path` names, absolute, in name order folder by folder: the file itself, the data files
 * anywhere under a directory (`isData` by name; dot files and folders skipped), or a glob's matches
 * (`*`, `?`, `**` as in hub file patterns). Synchronous: a stage's fingerprint lists them too.
 */
export function matchLocalPath(pattern: string, isData: (name: string) => boolean): string[] {
  const normal = path.normalize(pattern);
  if (!isGlob(normal)) {
    const info = statSync(normal, { throwIfNoEntry: false });
    if (info?.isFile()) return [path.resolve(normal)];
    if (!info?.isDirectory()) return [];
    return walk(normal, (name) => !name.startsWith(".") && isData(name)).map((f) => path.resolve(f));
  }
  const wanted = globToRegExp(normal);
  const base = globBase(normal) || ".";
  if (!statSync(base, { throwIfNoEntry: false })?.isDirectory()) return [];
  return walk(base, isData)
    .filter((file) => wanted.test(file))
    .map((f) => path.resolve(f));
}

/** The files under `dir` that `include` accepts by name, in name order folder by folder; dot-folders skipped. */
export function walk(dir: string, include: (name: string) => boolean): string[] {
  const found: string[] = [];
  const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory() && !entry.name.startsWith(".")) found.push(...walk(full, include));
    else if (entry.isFile() && include(entry.name)) found.push(full);
  }
  return found;
}
