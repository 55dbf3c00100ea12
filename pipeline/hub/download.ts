// Fetching one hub file to disk so that no byte is fetched twice: bytes go to `<dest>.part`, an
// interrupted transfer (dropped connection, Ctrl-C, kill -9) continues from the part's length with a
// Range request, and only a file whose size and hash match the hub's listing is renamed into place,
// followed by a small `.verified` note so later runs trust it without fetching or rehashing.

import { mkdir, open, readFile, rename, rm, stat, truncate, writeFile } from "node:fs/promises";
import path from "node:path";
import type { ReadableStreamDefaultReader, ReadableStreamReadResult } from "node:stream/web";
import { sleep } from "../abort.js";
import { UserError } from "../errors.js";
import type { FileDescription, HubClient, HubFile } from "./client.js";
import { FileIntegrityError, HubUnreachableError } from "./errors.js";
import { describeLocalFile } from "./local-files.js";

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

/** The `.verified` note beside a file: the listing it matched, at which commit, with which ETag. */
type VerifiedNote = Omit<HubFile, "type"> & { commit: string; etag: string };

export interface DownloadOptions {
  signal?: AbortSignal | undefined;
  /** called with bytes on disk so far, for progress */
  onProgress?: ((bytes: number, total: number) => void) | undefined;
}

/**
 * Downloads `file` at `commit` to `dest`, resuming and verifying. A kill can land between any two
 * steps, and each leftover is recognised on the next run without fetching again: a part with every
 * byte is verified as it is, and a file in place without its note is rehashed and kept.
 */
export async function downloadVerified(
  client: HubClient,
  file: HubFile,
  commit: string,
  dest: string,
  options: DownloadOptions = {},
): Promise<DownloadedFile> {
  const notePath = `${dest}.verified`;
  const onDisk = await stat(dest).catch(() => undefined);
  if (onDisk) {
    const known = await readNote(notePath);
    if (known && known.commit === commit && known.size === file.size && onDisk.size === file.size) {
      return result(dest, file, known.etag, false);
    }
    if (onDisk.size === file.size) {
      const { etag } = await client.describe(file, commit);
      if ((await verify(dest, file, etag)) === undefined) {
        await writeNote(notePath, file, commit, etag);
        return result(dest, file, etag, false);
      }
    }
    await rm(dest, { force: true });
  }
  await mkdir(path.dirname(dest), { recursive: true });
  const part = `${dest}.part`;
  // A mismatch may come from a corrupt resumed tail or a flaky proxy: one fresh fetch before giving up.
  for (let attempt = 0; ; attempt++) {
    const { etag, fetched } = await transfer(client, file, commit, part, options);
    const problem = await verify(part, file, etag);
    if (problem === undefined) {
      await rename(part, dest);
      await writeNote(notePath, file, commit, etag);
      return result(dest, file, etag, fetched);
    }
    await rm(part, { force: true });
    if (attempt >= 1) throw new FileIntegrityError(`${file.path} of dataset ${file.repo}`, problem);
  }
}

function result(dest: string, file: HubFile, etag: string, fetched: boolean): DownloadedFile {
  return { localPath: dest, size: file.size, sha256: file.sha256, gitOid: file.gitOid, etag, fetched };
}

async function writeNote(notePath: string, file: HubFile, commit: string, etag: string): Promise<void> {
  const note: VerifiedNote = { repo: file.repo, path: file.path, commit, size: file.size, etag };
  if (file.sha256) note.sha256 = file.sha256;
  if (file.gitOid) note.gitOid = file.gitOid;
  await writeFile(notePath, `${JSON.stringify(note)}\n`);
}

/**
 * Appends the missing bytes of `file` to `part`, retrying dropped transfers from where they stopped.
 * `fetched` is false when the part already held every byte (a run killed before verifying it).
 */
async function transfer(
  client: HubClient,
  file: HubFile,
  commit: string,
  part: string,
  options: DownloadOptions,
): Promise<{ etag: string; fetched: boolean }> {
  let failures = 0;
  let fetched = false;
  await (await open(part, "a")).close(); // an empty file is complete as soon as its part exists
  for (;;) {
    let have = (await stat(part)).size;
    if (have > file.size) {
      await truncate(part, 0);
      have = 0;
    }
    const progressBefore = have;
    try {
      // the probe is made even for a complete part: it surfaces 401/404 and gives the etag
      const description = await client.describe(file, commit);
      if (have === file.size) return { etag: description.etag, fetched };
      await appendFrom(client, file, commit, description, part, have, options);
      fetched = true;
      have = (await stat(part)).size;
      if (have >= file.size) return { etag: description.etag, fetched };
      throw new Error(`the transfer ended early at ${have} of ${file.size} bytes`);
    } catch (error) {
      // failures to probe or open were already retried by the hub fetch and explained as advice
      // (refusal, not found, unreachable), so only a broken or stalled body is worth resuming here
      if (options.signal?.aborted || error instanceof UserError) throw error;
      const grew = (await stat(part)).size > progressBefore;
      failures = grew ? 0 : failures + 1;
      if (failures > client.retries) {
        throw new HubUnreachableError(client.endpoint, `${file.path} of dataset ${file.repo}`, error);
      }
      await sleep(client.backoffMs * 2 ** Math.max(0, failures - 1), options.signal);
    }
  }
}

async function appendFrom(
  client: HubClient,
  file: HubFile,
  commit: string,
  description: FileDescription,
  part: string,
  start: number,
  options: DownloadOptions,
): Promise<void> {
  const body = await client.open(file, commit, description, start);
  const handle = await open(part, "a");
  const reader = body.getReader();
  let written = start;
  try {
    for (;;) {
      const { done, value } = await readWithin(reader, client.timeoutMs, options.signal);
      if (done) break;
      // never write past the end: a server ignoring Range would otherwise corrupt the part
      const room = file.size - written;
      const chunk = value.length > room ? value.subarray(0, room) : value;
      if (chunk.length > 0) await handle.write(chunk);
      written += chunk.length;
      options.onProgress?.(written, file.size);
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

/**
 * Undefined when `file` matches the listing, else what differs. The listing's hash decides; a listing
 * without one (some mirrors) falls back on the ETag, which the hub sets to the sha256 of an LFS file
 * and to the git blob id of a plain one.
 */
async function verify(
  file: string,
  expected: HubFile,
  etag: string | undefined,
): Promise<string | undefined> {
  const size = (await stat(file)).size;
  if (size !== expected.size) return `size ${size} bytes, expected ${expected.size}`;
  const tag = etag?.replace(/^W\//, "").replace(/"/g, "");
  const sha256 = expected.sha256 ?? (!expected.gitOid && tag && /^[0-9a-f]{64}$/.test(tag) ? tag : undefined);
  const gitOid = expected.gitOid ?? (!expected.sha256 && tag && /^[0-9a-f]{40}$/.test(tag) ? tag : undefined);
  if (!sha256 && !gitOid) return undefined;
  const actual = await describeLocalFile(file, expected.path);
  if (sha256) return actual.sha256 === sha256 ? undefined : `sha256 ${actual.sha256}, expected ${sha256}`;
  return actual.gitOid === gitOid ? undefined : `git blob id ${actual.gitOid}, expected ${gitOid}`;
}

async function readNote(file: string): Promise<VerifiedNote | undefined> {
  try {
    const note = JSON.parse(await readFile(file, "utf8")) as Partial<VerifiedNote> | null;
    return typeof note?.commit === "string" && typeof note.size === "number"
      ? (note as VerifiedNote)
      : undefined;
  } catch {
    return undefined;
  }
}

/** The commit and size that the `.verified` note beside `dest` vouches for, when it can be read. */
export async function verifiedNote(dest: string): Promise<{ commit: string; size: number } | undefined> {
  const note = await readNote(`${dest}.verified`);
  return note && { commit: note.commit, size: note.size };
}
