// Go's shared build cache: warmed once, linked as `current`, readable by the sandbox's uids and
// writable by nobody but its owner (the attack corpus checks a program cannot write it).
import { existsSync, lstatSync, readdirSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { goCacheRoot, warmGoCache } from "../../pipeline/sandbox/go-cache.js";

const root = await goCacheRoot();

describe.skipIf(root === null)("Go's shared build cache", () => {
  it("is warm after the warm-up, and no one but its owner may write any of it", async () => {
    await warmGoCache();
    const dir = root!;
    const current = readlinkSync(join(dir, "current"));
    expect(current).toMatch(/^warm-[0-9a-f]{16}$/);
    // testify's compiled packages are in it: many entries, not the 256 empty subdirs alone
    let files = 0;
    const walk = (path: string) => {
      const stat = lstatSync(path);
      expect(stat.mode & 0o022, path).toBe(0);
      expect(stat.mode & 0o004, path).toBe(0o004);
      if (!stat.isDirectory()) {
        files += 1;
        return;
      }
      for (const name of readdirSync(path)) walk(join(path, name));
    };
    walk(join(dir, current));
    expect(files).toBeGreaterThan(200);
    expect(readdirSync(dir).filter((name) => name.includes(".partial-") || name.endsWith(".lock"))).toEqual(
      [],
    );
    expect(existsSync(join(dir, "empty", "ff"))).toBe(true);
  });
});
