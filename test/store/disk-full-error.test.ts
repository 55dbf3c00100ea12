// How a failed write becomes the disk-full message (pipeline/errors.ts diskFull): each code it maps,
// EDQUOT included (no quota can be set on this machine's file systems, so it is tested from the error
// a write gets), the bytes the stage has written, a recursive mkdir's ENOENT that hides EROFS, and a
// folder the run may not make.

import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DiskFullError, diskFull, inCache } from "../../pipeline/errors.js";
import { present, tmpfsProblem } from "../support/required.js";
import { tempDir } from "../support/temp-dir.js";

const failed = (code: string, path?: string, syscall = "write") =>
  Object.assign(new Error(`${code}: failed, ${syscall}`), { code, syscall, ...(path ? { path } : {}) });

describe("diskFull", () => {
  it.each([
    ["ENOSPC", "no space left on the device", "Free space there", "larger"],
    ["EDQUOT", "the disk quota is exceeded", "Free space there", "larger"],
    ["EROFS", "the file system is read-only", "Make it writable again", "writable"],
  ])(
    "maps %s to exit 2 naming the path, the stage, what it wrote and what to do",
    (code, what, advice, disk) => {
      const dir = join(tempDir(), "filter");
      mkdirSync(join(dir, "parts"), { recursive: true });
      writeFileSync(join(dir, "parts", "0001.jsonl"), "x".repeat(3000));
      writeFileSync(join(dir, "manifest.json"), "{}");
      const error = diskFull(failed(code, join(dir, "parts", "0002.jsonl")), { name: "filter", dir });
      expect(error).toBeInstanceOf(DiskFullError);
      expect(error!.exitCode).toBe(2);
      expect(error!.message).toBe(
        `filter: cannot write ${join(dir, "parts", "0002.jsonl")}: ${what} (${code}); filter has written ` +
          `2.9 KiB so far (its folder ${dir}, caches aside). What was committed before is kept. ${advice}, or ` +
          `move data_dir (--data-dir) to a ${disk} disk, then run the same command again: it resumes where it stopped.`,
      );
    },
  );

  it("names a cache's file and setting, and leaves other errors alone", () => {
    const cache = inCache(failed("SQLITE_CANTOPEN"), "/x/embeddings.sqlite", "stages.pack.cache.path");
    expect(diskFull(cache)!.message).toContain(
      "cannot write /x/embeddings.sqlite: it cannot be created there (a read-only file system, or no permission) (SQLITE_CANTOPEN)",
    );
    expect(diskFull(cache)!.message).toContain("move it (stages.pack.cache.path) to a writable disk");
    // a file it may not write may be one it only reads: only a folder it may not make is mapped
    expect(diskFull(failed("EACCES", "/x"))).toBeUndefined();
    expect(diskFull(failed("EACCES", "/x/data", "mkdir"))!.message).toContain(
      "cannot write /x/data: no permission to make a folder there (EACCES). What was committed before is kept. Make it writable again",
    );
    expect(diskFull(failed("toString", "/x"))).toBeUndefined();
    expect(diskFull(failed("ENOENT", "/nowhere/at/all", "open"))).toBeUndefined();
    expect(diskFull(new Error("plain"))).toBeUndefined();
  });

  it("a recursive mkdir's ENOENT where the parent exists and is writable stays a bug, not a full disk", () => {
    expect(diskFull(failed("ENOENT", join(tempDir(), "a", "b"), "mkdir"))).toBeUndefined();
  });

  it.skipIf(!present("TMPFS", tmpfsProblem()))(
    "a recursive mkdir's ENOENT under a read-only file system is EROFS",
    () => {
      const mount = tempDir();
      execFileSync("mount", ["-t", "tmpfs", "-o", "size=64k,ro", "tmpfs", mount]);
      try {
        const dir = join(mount, "data", "download");
        const error = (() => {
          try {
            mkdirSync(dir, { recursive: true });
          } catch (e) {
            return e;
          }
        })();
        expect(error).toMatchObject({ code: "ENOENT" });
        expect(diskFull(error)!.message).toContain(
          `cannot write ${dir}: the file system is read-only (EROFS)`,
        );
      } finally {
        execFileSync("umount", [mount]);
      }
    },
  );
});
