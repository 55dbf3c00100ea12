// What a run leaves behind is all removed, whatever its shape: its run dir (the few files nearly every
// run leaves, which go the quick way, or many files, subdirs, links, an unwritable dir, which go the
// general way) and its cgroups (a member still on its way out, a child cgroup made inside).
import { spawn } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { openCgroupHost } from "../../pipeline/sandbox/cgroup.js";
import { helperBinary } from "../../pipeline/sandbox/launcher.js";
import { RunDirectory } from "../../pipeline/sandbox/workdir.js";

describe("a run dir's removal", () => {
  let parent: string;
  beforeEach(() => {
    parent = mkdtempSync(join(tmpdir(), "sandbox-leftovers-test-"));
  });
  afterEach(() => rmSync(parent, { recursive: true, force: true }));

  const shapes: [string, (work: string) => void][] = [
    ["empty", () => {}],
    [
      "a source file and an output file",
      (work) => {
        writeFileSync(join(work, "main.py"), "print(1)\n");
        writeFileSync(join(work, "out.txt"), "1\n");
      },
    ],
    [
      "links, one to a dir outside it",
      (work) => {
        writeFileSync(join(work, "main.py"), "x");
        symlinkSync(parent, join(work, "up"));
        symlinkSync("missing", join(work, "dangling"));
      },
    ],
    [
      "a thousand files",
      (work) => {
        for (let i = 0; i < 1000; i++) writeFileSync(join(work, `f${i}`), "x");
      },
    ],
    [
      "subdirs",
      (work) => {
        mkdirSync(join(work, "a/b"), { recursive: true });
        writeFileSync(join(work, "a/b/c.txt"), "x");
      },
    ],
    [
      "an unwritable subdir",
      (work) => {
        mkdirSync(join(work, "locked"));
        writeFileSync(join(work, "locked/f"), "x");
        chmodSync(join(work, "locked"), 0o000);
      },
    ],
  ];

  it.each(shapes)("removes a run dir holding %s, and only it", async (_name, fill) => {
    const dir = RunDirectory.create(parent, null, { withTmp: true });
    fill(dir.work);
    writeFileSync(join(dir.tmp!, "scratch"), "x");
    await dir.remove();
    expect(existsSync(dir.work)).toBe(false);
    expect(existsSync(dir.tmp!)).toBe(false);
    // a link to a dir outside is removed, never followed
    expect(readdirSync(parent)).toEqual([]);
  });

  it("is done when the dir is already gone", async () => {
    const dir = RunDirectory.create(parent, null, { withTmp: false });
    rmSync(dir.work, { recursive: true });
    await dir.remove();
    expect(existsSync(dir.work)).toBe(false);
  });
});

const opened = await openCgroupHost();
const enter = await helperBinary("enter");

describe.skipIf(opened.host === null || enter === null)("a run's cgroups' removal", () => {
  afterAll(() => opened.host?.close());

  it("waits for a member still on its way out, and kills one that stays", async () => {
    const run = opened.host!.createRun({ memoryBytes: 256 << 20, processes: 16 });
    const child = spawn(enter!, ["-1", ...run.procsFiles, "--", "/bin/sleep", "600"], { stdio: "ignore" });
    const exited = new Promise((resolve) => child.once("exit", (_code, signal) => resolve(signal)));
    while (readFileSync(run.procsFiles[0]!, "utf8").trim() === "")
      await new Promise((resolve) => setTimeout(resolve, 20));
    await run.remove();
    for (const procs of run.procsFiles) expect(existsSync(dirname(procs))).toBe(false);
    expect(await exited).toBe("SIGKILL");
  });

  it("removes a child cgroup made inside a run's", async () => {
    const run = opened.host!.createRun({ memoryBytes: 256 << 20, processes: 16 });
    for (const procs of run.procsFiles) mkdirSync(join(dirname(procs), "child"));
    await run.remove();
    for (const procs of run.procsFiles) expect(existsSync(dirname(procs))).toBe(false);
  });

  it("keeps the cap set last, whichever way it moved", () => {
    const run = opened.host!.createRun({ memoryBytes: 1 << 30, processes: 16 });
    const file = opened.host!.version === 1 ? "memory.limit_in_bytes" : "memory.max";
    const cap = () => Number(readFileSync(join(dirname(run.procsFiles[0]!), file), "utf8"));
    try {
      expect(cap()).toBe(1 << 30);
      run.setMemoryLimit(64 << 20);
      expect(cap()).toBe(64 << 20);
      run.setMemoryLimit(64 << 20);
      expect(cap()).toBe(64 << 20);
      run.setMemoryLimit(512 << 20);
      expect(cap()).toBe(512 << 20);
    } finally {
      void run.remove();
    }
  });
});
