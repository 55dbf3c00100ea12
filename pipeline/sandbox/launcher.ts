// Builds our three small C helpers once per machine (cached by content hash under the temp dir):
// launcher.c (saves each run the execs of setpriv/prlimit/GNU time), enter.c (puts a command into
// its run's cgroups before bubblewrap starts) and spawner.c (forks commands far cheaper than this
// process can). Where gcc is missing or the build fails, the sandbox falls back to those tools, a
// shell and Node's own spawn (same results, slower); `sandbox languages` shows which is in use.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { lstatSync, readFileSync } from "node:fs";
import { chmod, copyFile, mkdir, rename, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);
/** helper name -> its C source next to this file */
const SOURCES = {
  launch: fileURLToPath(new URL("./launcher.c", import.meta.url)),
  enter: fileURLToPath(new URL("./enter.c", import.meta.url)),
  spawn: fileURLToPath(new URL("./spawner.c", import.meta.url)),
};
export type HelperName = keyof typeof SOURCES;
const GCC = "/usr/bin/gcc";

/** Whether `path` is a real dir (or file) of ours that nobody else may write; undefined: not there. */
export function ours(path: string, kind: "dir" | "file"): boolean | undefined {
  const stat = lstatSync(path, { throwIfNoEntry: false });
  if (!stat) return undefined;
  const right = kind === "dir" ? stat.isDirectory() : stat.isFile();
  return right && stat.uid === (process.getuid?.() ?? stat.uid) && (stat.mode & 0o022) === 0;
}

async function compile(source: string, output: string): Promise<boolean> {
  const partial = `${output}.${process.pid}.partial`;
  // static: no dynamic loader work on every run
  for (const extra of [["-static"], []]) {
    try {
      await run(GCC, ["-O2", ...extra, "-o", partial, source], { timeout: 120_000 });
      await chmod(partial, 0o755);
      await rename(partial, output);
      return true;
    } catch {
      await rm(partial, { force: true });
    }
  }
  return false;
}

/** The per-machine cache of sandbox tools: ours, world-traversable, not writable by anyone else. */
export async function toolCacheDir(): Promise<string | null> {
  // world-traversable: bwrap may run as a sandbox uid and must reach what it mounts
  const dir = join(tmpdir(), `codefeedback-sandbox-tools-${process.getuid?.() ?? "user"}`);
  await mkdir(dir, { recursive: true, mode: 0o755 }).catch(() => {});
  return ours(dir, "dir") ? dir : null;
}

/**
 * A copy of a host tool (esbuild, a node outside /usr) in the tool cache, so an unprivileged bwrap
 * can mount it even when the project lives under a dir it cannot enter (/root). Keyed by path, size
 * and mtime; falls back to the original path when it cannot be copied.
 */
export async function stagedTool(hostPath: string): Promise<string> {
  try {
    const stat = lstatSync(hostPath);
    const dir = await toolCacheDir();
    if (!dir) return hostPath;
    const key = createHash("sha256")
      .update(`${hostPath}\0${stat.size}\0${stat.mtimeMs}`)
      .digest("hex")
      .slice(0, 16);
    const staged = join(dir, `${basename(hostPath)}-${key}`);
    const owned = ours(staged, "file");
    if (owned) return staged;
    if (owned === false) return hostPath;
    const partial = `${staged}.${process.pid}.partial`;
    await copyFile(hostPath, partial);
    await chmod(partial, 0o755);
    await rename(partial, staged);
    return staged;
  } catch {
    return hostPath;
  }
}

/**
 * Whether `path` (a process's argv[0], say) is a build of our helper `name`: the tool cache's
 * `<name>-<hash>` (bench/e2e/measure.mjs, plain JavaScript, repeats the pattern for the spawner).
 */
export function isHelperBinary(name: HelperName, path: string): boolean {
  return new RegExp(`/codefeedback-sandbox-tools-[^/]+/${name}-[0-9a-f]+$`).test(path);
}

const pending = new Map<HelperName, Promise<string | null>>();

/** A helper binary's path, building it on first use; null when it cannot be built here. */
export function helperBinary(name: HelperName): Promise<string | null> {
  if (!pending.has(name)) pending.set(name, buildHelper(name));
  return pending.get(name)!;
}

async function buildHelper(name: HelperName): Promise<string | null> {
  let source: Buffer;
  try {
    source = readFileSync(SOURCES[name]);
  } catch {
    return null;
  }
  const hash = createHash("sha256").update(source).digest("hex").slice(0, 16);
  const dir = await toolCacheDir();
  if (!dir) return null;
  const binary = join(dir, `${name}-${hash}`);
  const owned = ours(binary, "file");
  if (owned !== undefined) return owned ? binary : null;
  return (await compile(SOURCES[name], binary)) ? binary : null;
}
