// Run cgroups: a run's processes together stay under one memory cap and one process cap, the
// kernel's verdict reaches the message (and a kill for the host's shortage is the sandbox's fault, not
// the program's), nothing a run started survives it, and the sandbox leaves no cgroup behind. Where cgroups cannot be had the sandbox says why and rlimits still apply.
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { executeBlock, SandboxOutageError } from "../../pipeline/execution/index.js";
import { openCgroupHost } from "../../pipeline/sandbox/cgroup.js";
import { EmbeddedSandbox } from "../../pipeline/sandbox/index.js";
import { probeIsolationReport, testConfig } from "./helpers.js";
import { FORK_UNTIL_REFUSED } from "./hostile-corpus.js";

const report = await probeIsolationReport();

/** Dirs named after this process in every cgroup hierarchy this process belongs to. */
function ourCgroupDirs(): string[] {
  const found: string[] = [];
  const roots = readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .filter((line) => / - cgroup2? /.test(line))
    .map((line) => line.split(" ")[4]!);
  for (const line of readFileSync("/proc/self/cgroup", "utf8").split("\n").filter(Boolean)) {
    const path = line.split(":").slice(2).join(":");
    for (const root of roots) {
      const dir = `${root}${path}`;
      if (!existsSync(dir)) continue;
      for (const entry of readdirSync(dir)) {
        if (entry.startsWith(`codefeedback-sandbox-${process.pid}-`)) found.push(`${dir}/${entry}`);
      }
    }
  }
  return found;
}

describe.skipIf(report.cgroup === null)("run cgroups", () => {
  let sandbox: EmbeddedSandbox;
  const config = testConfig({ workers: 1, limits: { memory_mb: 256, memory_headroom_mb: 128 } });

  beforeAll(async () => {
    sandbox = new EmbeddedSandbox(config);
    expect((await sandbox.isolation()).cgroup).toBe(report.cgroup);
  });
  afterAll(() => sandbox.close());

  it("kills a run whose processes together pass the memory limit, and says so", async () => {
    // two children and the parent each stay under RLIMIT_AS (256 MiB); together they pass 384 MiB.
    // The parent allocates last and, by the time the sum passes the cap, is the largest: the kernel
    // picks it.
    const code = `import os, time
r, w = os.pipe()
for i in range(2):
    if os.fork() == 0:
        hold = b"x" * (100 << 20)
        os.write(w, b"."); time.sleep(60)
for i in range(2): os.read(r, 1)
hold = b"x" * (230 << 20)
print("survived")`;
    const response = await sandbox.run({ language: "python", code, run_timeout: 20 });
    expect(response.status).toBe("Failed");
    expect(response.run_result?.stdout).not.toContain("survived");
    expect(response.run_result?.signal).toBe("SIGKILL");
    expect(response.message).toContain("out of memory");
    expect(response.run_result?.peak_memory_kb).toBeLessThanOrEqual(384 * 1024);
  });

  it("answers a run the host's shortage took as its own fault: asked again, never the program's verdict", async () => {
    // the sandbox's memory cgroup above its runs, capped below the run's own cap (1,024 + 128 MiB),
    // as a host or a parent cgroup short of memory would be
    const [base, ...others] = ourCgroupDirs().filter(
      (dir) => existsSync(join(dir, "memory.limit_in_bytes")) || existsSync(join(dir, "memory.max")),
    );
    expect(others).toEqual([]);
    const cap = join(base!, report.cgroup === 1 ? "memory.limit_in_bytes" : "memory.max");
    writeFileSync(cap, String(192 << 20));
    try {
      const code = "hold = b'x' * (400 << 20)\nprint('survived')";
      await expect(sandbox.run({ language: "python", code, memory_limit_MB: 1024 })).rejects.toThrow(
        /ran out of memory, not the program: .* below its own limit of 1152 MiB/,
      );
      // a stage's way in: tried again, then an outage (the record fails and is retried), no verdict
      const settings = { memory_mb: 1024, sandbox_attempts: 2, backoff_ms: 1 };
      const block = executeBlock(sandbox, code, "python", settings);
      await expect(block).rejects.toThrow(SandboxOutageError);
      await expect(block).rejects.toThrow(/after 2 tries: the machine ran out of memory/);
    } finally {
      writeFileSync(cap, report.cgroup === 1 ? "-1" : "max");
    }
  });

  it("leaves no cgroup behind once closed", async () => {
    const other = new EmbeddedSandbox(testConfig({ workers: 1 }));
    await other.run({ language: "bash", code: "echo hi" });
    expect(ourCgroupDirs().length).toBeGreaterThan(0);
    await other.close();
    await sandbox.close();
    expect(ourCgroupDirs()).toEqual([]);
  });
});

describe.skipIf(report.cgroup === null)("run cgroups without isolation", () => {
  it("kill the daemons a trusted run leaves behind", async () => {
    const marker = `codefeedback-daemon-${process.pid}`;
    const sandbox = new EmbeddedSandbox(testConfig({ workers: 1, isolation: "none" }));
    try {
      const response = await sandbox.run({
        language: "bash",
        code: `setsid bash -c 'exec -a ${marker} sleep 1000' >/dev/null 2>&1 < /dev/null & echo started`,
      });
      expect(response.run_result?.stdout).toBe("started\n");
      const survivors = readdirSync("/proc").filter((pid) => {
        try {
          return /^\d+$/.test(pid) && readFileSync(`/proc/${pid}/cmdline`, "utf8").startsWith(marker);
        } catch {
          return false;
        }
      });
      expect(survivors).toEqual([]);
    } finally {
      await sandbox.close();
    }
  });
});

describe("without cgroups", () => {
  it("says why, and RLIMIT_NPROC still bounds a run's processes", async () => {
    const sandbox = new EmbeddedSandbox(
      testConfig({ workers: 1, cgroups: "off", limits: { processes: 16 } }),
    );
    try {
      const isolation = await sandbox.isolation();
      expect(isolation.cgroup).toBeNull();
      expect(isolation.cgroupProblem).toContain("off");
      if (isolation.mode === null) return;
      const response = await sandbox.run({
        language: "python",
        code: FORK_UNTIL_REFUSED,
      });
      const forked = Number(/forked (\d+)/.exec(response.run_result?.stdout ?? "")?.[1]);
      expect(forked).toBeGreaterThan(0);
      expect(forked).toBeLessThan(16);
    } finally {
      await sandbox.close();
    }
  });

  it("openCgroupHost explains a cgroup v2 parent it cannot use", async () => {
    if (process.getuid?.() !== 0) {
      expect((await openCgroupHost()).problem).toContain("not root");
      return;
    }
    const opened = await openCgroupHost("/nonexistent-cgroup-parent");
    // v1 machines ignore the v2 parent and nest under our own cgroups
    if (report.cgroup === 1) expect(opened.host?.version).toBe(1);
    else expect(opened.problem).toContain("cgroup_parent");
    await opened.host?.close();
  });
});
