// Fetching one hub file to disk so that no byte is fetched twice: bytes go to `<dest>.part`, an
// interrupted transfer (dropped connection, Ctrl-C, kill -9) continues from the part's length with a
// Range request, and only a file whose size and hash match the hub's listing is renamed into place,
// next to a small `.verified` note so later runs trust it without fetching or rehashing.

import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdir, open, readFile, rename, rm, stat, truncate, writeFile } from "node:fs/promises";
import path from "node:path";
import type { ReadableStreamDefaultReader, ReadableStreamReadResult } from "node:stream/web";
import type { HubClient, HubFile } from "./client.js";
import { FileIntegrityError, HubUnreachableError } from "./errors.js";
import { sleep } from "./fetch.js";

export interface DownloadedFile {
  /** absolute path of the verified file */
  localPath: string;
  size: number;
  sha256?: string | undefined;
  gitOid?: string | undefined;
  etag: string;
  /** true when this call transferred bytes; false when a verified copy was already there */
  fetched: boolean;
}

interface VerifiedNote {
  repo: string;
  path: string;
  commit: string;
  size: number;
  sha256?: string | undefined;
  gitOid?: string | undefined;
  etag: string;
}

export interface DownloadOptions {
  signal?: AbortSignal | undefined;
  /** called with bytes on disk so far, for progress */
  onProgress?: ((bytes: number, total: number) => void) | undefined;
}

/** Downloads `file` at `commit` to `dest`, resuming and verifying; see the file comment. */
export async function downloadVerified(
  client: HubClient,
  file: HubFile,
  commit: string,
  dest: string,
  options: DownloadOptions = {},
): Promise<DownloadedFile> {
  const notePath = `${dest}.verified`;
  const known = await readNote(notePath);
  const onDisk = await stat(dest).catch(() => undefined);
  if (known && onDisk && known.commit === commit && known.size === file.size && onDisk.size === file.size) {
    return {
      localPath: dest,
      size: file.size,
      sha256: known.sha256,
      gitOid: known.gitOid,
      etag: known.etag,
      fetched: false,
    };
  }
  await mkdir(path.dirname(dest), { recursive: true });
  const part = `${dest}.part`;
  const what = `${file.path} of dataset ${file.repo}`;
  // A mismatch may come from a corrupt resumed tail or a flaky proxy: one fresh fetch before giving up.
  for (let fresh = 0; ; fresh++) {
    const etag = await transfer(client, file, commit, part, options);
    const problem = await verify(part, file);
    if (problem === undefined) {
      await rename(part, dest);
      const note: VerifiedNote = { repo: file.repo, path: file.path, commit, size: file.size, etag };
      if (file.sha256) note.sha256 = file.sha256;
      if (file.gitOid) note.gitOid = file.gitOid;
      await writeFile(notePath, `${JSON.stringify(note)}\n`);
      return {
        localPath: dest,
        size: file.size,
        sha256: file.sha256,
        gitOid: file.gitOid,
        etag,
        fetched: true,
      };
    }
    await rm(part, { force: true });
    if (fresh >= 1) throw new FileIntegrityError(what, problem);
  }
}

/** Appends the missing bytes of `file` to `part`, retrying dropped transfers from where they stopped. */
async function transfer(
  client: HubClient,
  file: HubFile,
  commit: string,
  part: string,
  options: DownloadOptions,
): Promise<string> {
  let etag = "";
  let failures = 0;
  await (await open(part, "a")).close(); // an empty file is complete as soon as its part exists
  for (;;) {
    let have = (await stat(part).catch(() => undefined))?.size ?? 0;
    if (have > file.size) {
      await truncate(part, 0);
      have = 0;
    }
    if (have === file.size && etag !== "") return etag;
    const progressBefore = have;
    try {
      // opened even when the part looks complete, so 401/404 surface and the etag is known
      const opened = await client.open(file, commit, have === file.size ? 0 : have);
      etag = opened.etag;
      if (have === file.size) {
        await opened.body.cancel().catch(() => {});
        return etag;
      }
      await appendStream(opened.body, part, client.timeoutMs, options, have, file.size);
      have = (await stat(part)).size;
      if (have >= file.size) return etag;
      throw new Error(`the transfer ended early at ${have} of ${file.size} bytes`);
    } catch (error) {
      if (options.signal?.aborted) throw error;
      if (!isTransient(error)) throw error;
      const grew = ((await stat(part).catch(() => undefined))?.size ?? 0) > progressBefore;
      failures = grew ? 0 : failures + 1;
      if (failures > client.retries) {
        throw new HubUnreachableError(client.endpoint, `${file.path} of dataset ${file.repo}`, error);
      }
      await sleep(client.backoffMs * 2 ** Math.max(0, failures - 1), options.signal);
    }
  }
}

/**
 * Errors worth a resumed retry: a broken or stalled body. Failures to open were already retried by the
 * hub fetch and explained as UserErrors (refusal, not found, unreachable), so they end the download.
 */
function isTransient(error: unknown): boolean {
  if (typeof error === "string") return true; // the library aborts a broken body stream with a message
  return error instanceof Error && !("exitCode" in error);
}

async function appendStream(
  body: ReadableStream<Uint8Array>,
  part: string,
  stallMs: number,
  options: DownloadOptions,
  start: number,
  total: number,
): Promise<void> {
  const handle = await open(part, "a");
  const reader = body.getReader();
  let written = start;
  try {
    for (;;) {
      const { done, value } = await readWithin(reader, stallMs, options.signal);
      if (done) break;
      // never write past the end: a server ignoring Range would otherwise corrupt the part
      const room = total - written;
      const chunk = value.length > room ? value.subarray(0, room) : value;
      if (chunk.length > 0) await handle.write(chunk);
      written += chunk.length;
      options.onProgress?.(written, total);
      if (value.length > room) break;
    }
  } finally {
    await reader.cancel().catch(() => {});
    await handle.close();
  }
}

async function readWithin(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  ms: number,
  signal: AbortSignal | undefined,
): Promise<ReadableStreamReadResult<Uint8Array>> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const stalled = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the transfer stalled for ${ms / 1000}s`)), ms);
    if (signal) {
      onAbort = () => reject(signal.reason);
      signal.addEventListener("abort", onAbort, { once: true });
    }
  });
  try {
    return await Promise.race([reader.read(), stalled]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener("abort", onAbort);
  }
}

/** Undefined when `file` matches the listing, else what differs. */
async function verify(file: string, expected: HubFile): Promise<string | undefined> {
  const size = (await stat(file)).size;
  if (size !== expected.size) return `size ${size} bytes, expected ${expected.size}`;
  if (expected.sha256) {
    const actual = await digest(file, "sha256");
    if (actual !== expected.sha256) return `sha256 ${actual}, expected ${expected.sha256}`;
  } else if (expected.gitOid) {
    const actual = await digest(file, "sha1", `blob ${size}\0`);
    if (actual !== expected.gitOid) return `git blob id ${actual}, expected ${expected.gitOid}`;
  }
  return undefined;
}

async function digest(file: string, algorithm: string, prefix?: string): Promise<string> {
  const hash = createHash(algorithm);
  if (prefix !== undefined) hash.update(prefix);
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 })) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

async function readNote(file: string): Promise<VerifiedNote | undefined> {
  try {
    return JSON.parse(await readFile(file, "utf8")) as VerifiedNote;
  } catch {
    return undefined;
  }
}
