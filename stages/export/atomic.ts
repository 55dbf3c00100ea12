// Files that are either whole or absent: written under a temporary name in the same directory, synced,
// then renamed over the target (and the directory synced), so a kill at any instant leaves the
// previous file or the new one, never half of either. Leftover temporaries of a killed run are removed
// by the next one.
import { createHash } from "node:crypto";
import { mkdir, open, readdir, readFile, rename, rm } from "node:fs/promises";
import path from "node:path";
import { syncDir } from "../../pipeline/store/manifest.js";

const TMP = /\.tmp-\d+$/;

export interface WrittenFile {
  /** the file name inside the export directory */
  name: string;
  bytes: number;
  sha256: string;
}

/** The temporary name a file is written under before it takes its place. */
export function temporaryName(target: string): string {
  return `${target}.tmp-${process.pid}`;
}

/** Removes temporaries a killed run left in `dir`. */
export async function removeLeftovers(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (const name of await readdir(dir)) if (TMP.test(name)) await rm(path.join(dir, name), { force: true });
}

/** Writes `chunks` to `target` atomically; returns its size and SHA-256. */
export async function writeAtomically(target: string, chunks: Iterable<string>): Promise<WrittenFile> {
  const tmp = temporaryName(target);
  const hash = createHash("sha256");
  let bytes = 0;
  const handle = await open(tmp, "w");
  try {
    let buffer: string[] = [];
    let size = 0;
    const flush = async () => {
      const data = Buffer.from(buffer.join(""), "utf8");
      hash.update(data);
      bytes += data.length;
      await handle.write(data);
      buffer = [];
      size = 0;
    };
    for (const chunk of chunks) {
      buffer.push(chunk);
      size += chunk.length;
      if (size >= 1 << 20) await flush();
    }
    await flush();
    await handle.sync();
  } finally {
    await handle.close();
  }
  await commit(tmp, target);
  return { name: path.basename(target), bytes, sha256: hash.digest("hex") };
}

/** Syncs a file another writer produced under its temporary name, then renames it into place. */
export async function commitWritten(tmp: string, target: string): Promise<WrittenFile> {
  const handle = await open(tmp, "r+");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
  const data = await readFile(tmp);
  await commit(tmp, target);
  return {
    name: path.basename(target),
    bytes: data.length,
    sha256: createHash("sha256").update(data).digest("hex"),
  };
}

async function commit(tmp: string, target: string): Promise<void> {
  await rename(tmp, target);
  syncDir(path.dirname(target));
}
