// A sandbox killed with -9 leaves its host area (and, as root, its tmpfs mounts); the next sandbox
// started on the machine removes it.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createHostArea, removeHostArea } from "../../pipeline/sandbox/host-area.js";
import { RUNNING_AS_ROOT } from "./helpers.js";

/** A one-slot area without tmpfs or launcher: the parts the clean-up concerns. */
const createTestArea = () =>
  createHostArea({ slots: 1, uidBase: 64500, workDirMb: 8, tmpfs: false, launcher: false });

describe("host area", () => {
  it("removes areas (and unmounts tmpfs) left by dead sandbox processes", async () => {
    const deadPid = spawnSync("/usr/bin/true").pid!;
    const stale = join(tmpdir(), `codefeedback-sandbox-${deadPid}-test${Date.now()}`);
    const runs = join(stale, "slot-0", "runs");
    mkdirSync(runs, { recursive: true });
    if (RUNNING_AS_ROOT)
      execFileSync("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "codefeedback-sandbox", runs]);
    const area = await createTestArea();
    try {
      expect(existsSync(stale)).toBe(false);
      expect(readFileSync("/proc/self/mountinfo", "utf8")).not.toContain(runs);
      expect(existsSync(area.kit.etcDir)).toBe(true);
    } finally {
      await removeHostArea(area);
    }
    expect(existsSync(area.base)).toBe(false);
  });

  it("keeps the areas of live sandbox processes", async () => {
    const live = join(tmpdir(), `codefeedback-sandbox-${process.pid}-test${Date.now()}`);
    mkdirSync(live);
    const area = await createTestArea();
    await removeHostArea(area);
    expect(existsSync(live)).toBe(true);
    rmSync(live, { recursive: true });
  });
});
