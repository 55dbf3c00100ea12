// A data dir on a file system that fills up mid-run (a tmpfs the test mounts, half the size a run
// needs): the run stops with exit 2 and a message naming the stage, the path and what to do, no
// stack; what was committed stays readable; with room again, the rerun gives an undisturbed run's
// records. A read-only file system likewise (exit 2, advice to make it writable), and a full or
// read-only LLM or embedding cache.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { StageStore } from "../../pipeline/store/stage-store.js";
import { onSamples, runCli } from "../support/cli.js";
import { startLlmServer } from "../support/llm-server.js";
import { present, tmpfsProblem } from "../support/required.js";
import { tempDir } from "../support/temp-dir.js";
import { cli, outcomeOf, SECRET, useReferenceRun } from "./kit.js";

const canMount = present("TMPFS", tmpfsProblem());
const run = (dataDir: string, args: string[]) =>
  runCli([...args, ...onSamples(dataDir, ["hub.endpoint=file:data/sample"])], { env: { HF_ENDPOINT: "" } });

function bytesUnder(dir: string): number {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .reduce((sum, e) => sum + statSync(join(e.parentPath, e.name)).size, 0);
}

const failedIn = (dir: string) =>
  new StageStore(dir, "filter")
    .parts()
    .flatMap((p) => readFileSync(p, "utf8").split("\n"))
    .filter((line) => line && "f" in JSON.parse(line));

const ref = useReferenceRun("cf-disk-full-");

describe.skipIf(!canMount)("a full disk", () => {
  it("stops the run with exit 2 and advice; the rerun after space is freed is undisturbed", async () => {
    const reference = join(tempDir(), "data");
    const undisturbed = await run(reference, ["run", "dedup"]);
    expect(undisturbed.code, undisturbed.stderr).toBe(0);
    const expected = await run(reference, ["cat", "dedup"]);
    expect(expected.stdout.trim().split("\n").length).toBeGreaterThan(100);

    const mount = tempDir();
    const half = Math.floor(bytesUnder(reference) / 2 / 4096) * 4096;
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${half}`, "tmpfs", mount]);
    try {
      const data = join(mount, "data");
      const full = await run(data, ["run", "dedup"]);
      expect(full.code, full.stderr).toBe(2);
      expect(full.stderr).toMatch(
        new RegExp(
          `error: (download|normalize|dedup): cannot write ${mount}/\\S+: no space left on the device \\(ENOSPC\\); \\1 has written [\\d.]+ (B|KiB) so far \\(its folder ${data}/\\1, caches aside\\)`,
        ),
      );
      expect(full.stderr).toContain("Free space there, or move data_dir (--data-dir) to a larger disk");
      expect(full.stderr).not.toMatch(/\n\s+at /);
      expect(readdirSync(data, { recursive: true }).filter((f) => String(f).endsWith(".tmp"))).toEqual([]);
      const status = await run(data, ["status"]);
      expect(status.code, status.stderr).toBe(0);

      const verbose = await run(data, ["run", "dedup", "--verbose"]);
      expect(verbose.code).toBe(2);
      expect(verbose.stderr).toMatch(/ENOSPC[^\n]*\n(.*\n)*\s+at /);

      execFileSync("mount", ["-o", "remount,size=16m", mount]);
      const rerun = await run(data, ["run", "dedup"]);
      expect(rerun.code, rerun.stderr).toBe(0);
      expect((await run(data, ["cat", "dedup"])).stdout).toBe(expected.stdout);
    } finally {
      execFileSync("umount", [mount]);
    }
  });

  it("a read-only file system where the run gets to stops it with exit 2 and advice; the rerun after remount,rw is undisturbed", async () => {
    const reference = join(tempDir(), "data");
    expect((await run(reference, ["run", "dedup"])).code).toBe(0);
    const expected = await run(reference, ["cat", "dedup"]);

    // download and normalize write to the data dir; dedup's files are on a tmpfs that is read-only
    const data = join(tempDir(), "data");
    const mount = join(data, "dedup");
    mkdirSync(mount, { recursive: true });
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=16m,ro", "tmpfs", mount]);
    try {
      const readOnly = await run(data, ["run", "dedup"]);
      expect(readOnly.code, readOnly.stderr).toBe(2);
      expect(readOnly.stderr).toContain(`error: dedup: cannot write ${mount}/`);
      expect(readOnly.stderr).toContain("the file system is read-only (EROFS)");
      expect(readOnly.stderr).toContain(
        "Make it writable again, or move data_dir (--data-dir) to a writable disk",
      );
      expect(readOnly.stderr).not.toMatch(/\n\s+at /);
      expect(readOnly.stderr).toContain("normalize: complete");
      expect((await run(data, ["cat", "normalize"])).stdout).toBe(
        (await run(reference, ["cat", "normalize"])).stdout,
      );

      execFileSync("mount", ["-o", "remount,rw", mount]);
      const rerun = await run(data, ["run", "dedup"]);
      expect(rerun.code, rerun.stderr).toBe(0);
      expect(rerun.stderr).toContain("normalize: up to date");
      expect((await run(data, ["cat", "dedup"])).stdout).toBe(expected.stdout);
    } finally {
      execFileSync("umount", [mount]);
    }
  });

  it("a data dir on a file system read-only from the start stops the run with exit 2 naming the path; the rerun after remount,rw is undisturbed", async () => {
    const reference = join(tempDir(), "data");
    expect((await run(reference, ["run", "normalize"])).code).toBe(0);
    const expected = await run(reference, ["cat", "normalize"]);

    const mount = tempDir();
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=16m,ro", "tmpfs", mount]);
    try {
      const data = join(mount, "data");
      const readOnly = await run(data, ["run", "normalize"]);
      expect(readOnly.code, readOnly.stderr).toBe(2);
      expect(readOnly.stderr).toContain(
        `error: cannot write ${data}/download: the file system is read-only (EROFS)`,
      );
      expect(readOnly.stderr).toContain(
        "Make it writable again, or move data_dir (--data-dir) to a writable disk",
      );
      expect(readOnly.stderr).not.toMatch(/\n\s+at /);

      execFileSync("mount", ["-o", "remount,rw", mount]);
      const rerun = await run(data, ["run", "normalize"]);
      expect(rerun.code, rerun.stderr).toBe(0);
      expect((await run(data, ["cat", "normalize"])).stdout).toBe(expected.stdout);
    } finally {
      execFileSync("umount", [mount]);
    }
  });

  it("a stage's folder made read-only mid-stage stops the run with exit 2 and advice, marks no record failed; the rerun is undisturbed", async () => {
    // slow answers, so the stage is still running when its folder turns read-only
    const slow = await startLlmServer({ latencyMs: 150, requireKey: SECRET });
    const dir = join(tempDir(), "data");
    const stageDir = join(dir, "filter");
    const env = { OPENAI_BASE_URL: slow.url, OPENAI_API_KEY: SECRET };
    let mounted = false;
    try {
      // Files the stage holds open stay writable (a remount would be refused with EBUSY); a read-only
      // bind mount over its folder fails every file it opens, renames or creates from then on.
      const stopped = await cli(dir, ["run", "filter"], env, () => {
        if (!mounted && existsSync(stageDir) && slow.count >= 20) {
          execFileSync("mount", ["--bind", stageDir, stageDir]);
          mounted = true;
          execFileSync("mount", ["-o", "remount,bind,ro", stageDir]);
        }
        return false;
      });
      expect(mounted).toBe(true);
      expect(stopped.code, stopped.stderr).toBe(2);
      expect(stopped.stderr).toContain(`error: filter: cannot write ${stageDir}/`);
      expect(stopped.stderr).toContain("the file system is read-only (EROFS); filter has written");
      expect(stopped.stderr).toContain("Make it writable again");
      expect(stopped.stderr).not.toMatch(/\n\s+at /);
      execFileSync("umount", [stageDir]);
      mounted = false;
      expect(failedIn(dir)).toEqual([]);

      const rerun = await cli(dir, ["run", "filter"], env);
      expect(rerun.code, rerun.stderr).toBe(0);
      expect(await outcomeOf(dir)).toEqual({ kept: ref.reference.kept, rejected: ref.reference.rejected });
    } finally {
      if (mounted) execFileSync("umount", [stageDir]);
      await slow.close();
    }
  });

  it("an LLM cache on a read-only file system stops the run with exit 2 and advice; the rerun after remount,rw is undisturbed", async () => {
    const mount = tempDir();
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=1m,ro", "tmpfs", mount]);
    try {
      const dir = join(tempDir(), "data");
      const cache = ["--set", `llm.cache.path=${mount}/llm-cache.sqlite`];
      const readOnly = await cli(dir, ["run", "filter", ...cache], ref.env());
      expect(readOnly.code, readOnly.stderr).toBe(2);
      expect(readOnly.stderr).toContain(`cannot write ${mount}/llm-cache.sqlite: `);
      expect(readOnly.stderr).toContain("(SQLITE_CANTOPEN)");
      expect(readOnly.stderr).toContain(
        "Make it writable again, or move it (llm.cache.path) to a writable disk",
      );
      expect(readOnly.stderr).not.toMatch(/\n\s+at /);
      expect(failedIn(dir)).toEqual([]);

      execFileSync("mount", ["-o", "remount,rw", mount]);
      const rerun = await cli(dir, ["run", "filter", ...cache], ref.env());
      expect(rerun.code, rerun.stderr).toBe(0);
      expect(await outcomeOf(dir)).toEqual({ kept: ref.reference.kept, rejected: ref.reference.rejected });
    } finally {
      execFileSync("umount", [mount]);
    }
  });

  it.each([
    [
      "ro",
      "SQLITE_CANTOPEN",
      "Make it writable again, or move it (stages.pack.cache.path) to a writable disk",
    ],
    ["size=48k", "SQLITE_FULL", "Free space there, or move it (stages.pack.cache.path) to a larger disk"],
    [
      "size=16k",
      "SQLITE_IOERR_SHMSIZE",
      "Free space there, or move it (stages.pack.cache.path) to a larger disk",
    ],
  ])(
    "an embedding cache on a tmpfs (%s) stops pack with exit 2 (%s) and advice; the rerun after remount,rw is undisturbed",
    async (options, code, advice) => {
      const reference = join(tempDir(), "data");
      const undisturbed = await cli(reference, ["run", "pack"], ref.env());
      expect(undisturbed.code, undisturbed.stderr).toBe(0);
      const expected = (await cli(reference, ["cat", "pack"], ref.env())).stdout;
      expect(expected.length).toBeGreaterThan(0);

      const mount = tempDir();
      execFileSync("mount", ["-t", "tmpfs", "-o", options, "tmpfs", mount]);
      try {
        const dir = join(tempDir(), "data");
        const cache = ["--set", `stages.pack.cache.path=${mount}/embeddings.sqlite`];
        const stopped = await cli(dir, ["run", "pack", ...cache], ref.env());
        expect(stopped.code, stopped.stderr).toBe(2);
        expect(stopped.stderr).toContain(`error: pack: cannot write ${mount}/embeddings.sqlite: `);
        expect(stopped.stderr).toContain(`(${code})`);
        expect(stopped.stderr).toContain(advice);
        expect(stopped.stderr).not.toMatch(/\n\s+at /);

        execFileSync("mount", ["-o", "remount,rw,size=16m", mount]);
        const rerun = await cli(dir, ["run", "pack", ...cache], ref.env());
        expect(rerun.code, rerun.stderr).toBe(0);
        expect((await cli(dir, ["cat", "pack"], ref.env())).stdout).toBe(expected);
      } finally {
        execFileSync("umount", [mount]);
      }
    },
  );

  // 48k: the database file cannot grow; 16k: nor can its WAL index (SQLite's -shm file)
  it.each([
    ["48k", "SQLITE_FULL"],
    ["16k", "SQLITE_IOERR_SHMSIZE"],
  ])(
    "a full LLM cache (%s) stops the run with exit 2 (%s) and marks no record failed; the rerun is undisturbed",
    async (size, code) => {
      const mount = tempDir();
      execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", mount]);
      try {
        const dir = join(tempDir(), "data");
        const cache = ["--set", `llm.cache.path=${mount}/llm-cache.sqlite`];
        const full = await cli(dir, ["run", "filter", ...cache], ref.env());
        expect(full.code, full.stderr).toBe(2);
        expect(full.stderr).toContain(
          `error: filter: cannot write ${mount}/llm-cache.sqlite: no space left on the device (${code})`,
        );
        expect(full.stderr).toContain("Free space there, or move it (llm.cache.path) to a larger disk");
        expect(full.stderr).not.toMatch(/\n\s+at /);
        expect(failedIn(dir)).toEqual([]);

        execFileSync("mount", ["-o", "remount,size=16m", mount]);
        const rerun = await cli(dir, ["run", "filter", ...cache], ref.env());
        expect(rerun.code, rerun.stderr).toBe(0);
        expect(await outcomeOf(dir)).toEqual({ kept: ref.reference.kept, rejected: ref.reference.rejected });
      } finally {
        execFileSync("umount", [mount]);
      }
    },
  );
});
