// The two content ids the hub lists for a file: the sha256 of an LFS (or Xet) file's bytes, and the
// git blob id (sha1 over `blob <size>\0<bytes>`) of a plain git file.
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";

/** Hex digest of a file's contents, streamed, after `prefix` when given. */
export async function fileDigest(
  file: string,
  algorithm: "sha256" | "sha1",
  prefix?: string,
): Promise<string> {
  const hash = createHash(algorithm);
  if (prefix !== undefined) hash.update(prefix);
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 })) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

export function gitBlobId(content: Buffer): string {
  return createHash("sha1").update(`blob ${content.length}\0`).update(content).digest("hex");
}
