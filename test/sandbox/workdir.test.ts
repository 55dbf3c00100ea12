// The run dir refuses paths that would land outside it and never follows a link out when fetching.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { SandboxRequestError } from "../../pipeline/sandbox/index.js";
import { RunDirectory, runPath } from "../../pipeline/sandbox/workdir.js";
import { tempDir } from "../support/temp-dir.js";

describe("runPath", () => {
  it.each([
    ["a.txt", "work", "a.txt"],
    ["dir/./b.txt", "work", "dir/b.txt"],
    ["dir/../c.txt", "work", "c.txt"],
    ["/work/d.txt", "work", "d.txt"],
    ["/work/x/../e.txt", "work", "e.txt"],
    ["win\\path.txt", "work", "win/path.txt"],
    ["/mnt/data/x", "mnt", "data/x"],
    ["/mnt/b", "mnt", "b"],
  ])("accepts %s in the %s dir as %s", (requested, area, relative) => {
    expect(runPath(requested)).toEqual({ area, relative });
  });

  it.each([
    "../x",
    "a/../../x",
    "../../etc",
    "/etc/passwd",
    "/work/../etc/passwd",
    "/mnt/../etc/passwd",
    "/mnt",
    "/mntx/a",
    "/workshop/x",
    ".",
    "",
    "..",
    "a\0b",
  ])("refuses %j", (requested) => {
    expect(() => runPath(requested)).toThrow(SandboxRequestError);
  });
});

describe("RunDirectory", () => {
  let parent: string;
  let dir: RunDirectory;
  beforeEach(() => {
    parent = tempDir("sandbox-workdir-test-");
    dir = RunDirectory.create(parent, null, { withTmp: false });
  });

  it("writes nested files and fetches them as base64", async () => {
    dir.write("a/b/c.txt", Buffer.from("hello"));
    expect(await dir.fetch(["a/b/c.txt", "/work/a/b/c.txt", "nope"], 1 << 20)).toEqual({
      "a/b/c.txt": Buffer.from("hello").toString("base64"),
      "/work/a/b/c.txt": Buffer.from("hello").toString("base64"),
    });
  });

  it("writes /mnt paths into the run's own /mnt dir and fetches them from there", async () => {
    expect(dir.write("/mnt/data/x", Buffer.from("m"))).toBe("/mnt/data/x");
    expect(readFileSync(join(dir.mnt!, "data", "x"), "utf8")).toBe("m");
    expect(existsSync(join(dir.work, "data"))).toBe(false);
    expect(await dir.fetch(["/mnt/data/x"], 1 << 20)).toEqual({
      "/mnt/data/x": Buffer.from("m").toString("base64"),
    });
    await dir.remove();
    expect(existsSync(dir.mnt!)).toBe(false);
  });

  it("has no /mnt dir without isolation, and says so", () => {
    const unisolated = RunDirectory.create(parent, null, { withTmp: true });
    expect(unisolated.mnt).toBeNull();
    expect(() => unisolated.write("/mnt/x", "x")).toThrow(/only an isolated run has/);
  });

  it("refuses to write through a path that climbs out", async () => {
    expect(() => dir.write("../../outside.txt", "x")).toThrow(/outside the work dir/);
    dir.write("plain", "x");
    expect(() => dir.write("plain/below.txt", "x")).toThrow(/goes through plain, which is a file/);
  });

  it("turns a file that cannot be placed into advice, not an internal error", () => {
    dir.write("a/b.txt", "x");
    expect(() => dir.write("a", "x")).toThrow(SandboxRequestError);
    expect(() => dir.write("a", "x")).toThrow(/cannot write file "a" into the work dir \(EISDIR\)/);
    expect(() => dir.write(`${"d/".repeat(3000)}f`, "x")).toThrow(/deeper than/);
    expect(() => dir.write(`${"x".repeat(2000)}`, "x")).toThrow(/longer than/);
  });

  it("never writes a request's file through a link", () => {
    const outside = join(parent, "outside.txt");
    writeFileSync(outside, "secret");
    symlinkSync(outside, join(dir.work, "link"));
    expect(() => dir.write("link", "overwritten")).toThrow(SandboxRequestError);
    expect(readFileSync(outside, "utf8")).toBe("secret");
  });

  it("never follows a link out of the work dir, at any depth", async () => {
    const outside = join(parent, "outside.txt");
    writeFileSync(outside, "secret");
    symlinkSync(outside, join(dir.work, "link"));
    symlinkSync(parent, join(dir.work, "up"));
    mkdirSync(join(dir.work, "d"));
    symlinkSync(parent, join(dir.work, "d", "up"));
    const fetched = await dir.fetch(["link", "up/outside.txt", "d/up/outside.txt"], 1 << 20);
    expect(fetched).toEqual({});
  });

  it("skips what is not a regular file and stops at the size budget", async () => {
    mkdirSync(join(dir.work, "sub"));
    dir.write("big.txt", Buffer.alloc(2048));
    dir.write("small.txt", Buffer.alloc(10));
    expect(Object.keys(await dir.fetch(["sub", "big.txt", "small.txt"], 1024))).toEqual(["small.txt"]);
  });

  it("removes dirs a program nested deeper than a path can name", async () => {
    const nest = spawnSync("/usr/bin/python3", [
      "-c",
      "import os, sys\nos.chdir(sys.argv[1])\nfor _ in range(3000):\n    os.mkdir('d'); os.chdir('d')\nopen('f', 'w').write('x')",
      dir.work,
    ]);
    expect(nest.status).toBe(0);
    await dir.remove();
    expect(existsSync(dir.work)).toBe(false);
  });

  it("removes everything, even dirs the program made unwritable", async () => {
    dir.write("locked/file.txt", "x");
    const { chmodSync } = await import("node:fs");
    chmodSync(join(dir.work, "locked"), 0o000);
    await dir.remove();
    expect(existsSync(dir.work)).toBe(false);
  });
});
