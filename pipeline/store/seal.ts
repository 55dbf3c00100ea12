// What a complete stage's parts were when it completed: each file's name, size and SHA-256, kept in its
// manifest. Reading the stage compares against it, so a part cut short or changed afterwards (a disk
// fault, a copy gone wrong) stops the reader instead of silently handing on fewer records: the torn-
// line repair that makes resume safe would otherwise skip a cut last line as if a kill had torn it.
import { createHash } from "node:crypto";
import { closeSync, existsSync, openSync, readSync, statSync } from "node:fs";
import { basename } from "node:path";
import { StoreError } from "./parts.js";

export interface PartSeal {
  file: string;
  bytes: number;
  sha256: string;
}

export function sealParts(paths: readonly string[]): PartSeal[] {
  return paths.map((path) => {
    const hash = createHash("sha256");
    const buffer = Buffer.alloc(1 << 20);
    const fd = openSync(path, "r");
    let bytes = 0;
    try {
      for (let n = readSync(fd, buffer); n > 0; n = readSync(fd, buffer)) {
        hash.update(buffer.subarray(0, n));
        bytes += n;
      }
    } finally {
      closeSync(fd);
    }
    return { file: basename(path), bytes, sha256: hash.digest("hex") };
  });
}

/** The advice every mismatch ends with: the stage's outputs cannot be trusted, so recompute them. */
export function damagedStage(stage: string, dir: string, what: string): StoreError {
  return new StoreError(
    `stage ${stage} is damaged: ${what} (in ${dir}), so records were lost or changed after it completed. ` +
      `Run \`pnpm pipeline run ${stage} --force\` to recompute it; the stages after it then recompute too.`,
  );
}

/**
 * What differs between the parts on disk and the seal, by name and size only; undefined if nothing:
 * the cheap part of the check, before any record is read (`PartHashCheck` checks the bytes as read).
 */
export function sealMismatch(paths: readonly string[], seal: readonly PartSeal[]): string | undefined {
  const present = new Set(paths.map((p) => basename(p)));
  for (const part of seal) {
    if (!present.has(part.file)) return `part ${part.file} is missing`;
  }
  const sealed = new Map(seal.map((p) => [p.file, p]));
  for (const path of paths) {
    const part = sealed.get(basename(path));
    if (!part) return `part ${basename(path)} was not there when it completed`;
    const bytes = existsSync(path) ? statSync(path).size : 0;
    if (bytes !== part.bytes)
      return `part ${part.file} has ${bytes} bytes where its manifest says ${part.bytes}`;
  }
  return undefined;
}

/** Hashes one part's bytes as a reader streams them, and says whether they are what was sealed. */
export class PartHashCheck {
  private readonly hash = createHash("sha256");
  constructor(private readonly part: PartSeal) {}
  readonly add = (chunk: Buffer | string): void => {
    this.hash.update(chunk);
  };
  verify(stage: string, dir: string): void {
    if (this.hash.digest("hex") !== this.part.sha256) {
      throw damagedStage(stage, dir, `part ${this.part.file} differs from what its manifest recorded`);
    }
  }
}
