// The run cgroups on their own, without bubblewrap: whichever cgroup version this machine has (v1
// here, v2 on most current machines), a process tree entered through the enter helper is held to its
// memory and process caps, a limit set late applies, and removal kills what is left. The v2-only
// `cgroup_parent` runs where v2 is mounted.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CgroupHost, openCgroupHost } from "../../pipeline/sandbox/cgroup.js";
import { helperBinary } from "../../pipeline/sandbox/launcher.js";
import { memoryKillOf } from "../../pipeline/sandbox/memory-kill.js";
import { FORK_UNTIL_REFUSED } from "./hostile-corpus.js";

const opened = await openCgroupHost();
const enter = await helperBinary("enter");
/** cgroup v2 mounted as the only hierarchy (not v1's tmpfs of controllers) */
const V2_ROOT = existsSync("/sys/fs/cgroup/cgroup.subtree_control");

/**
 * Runs argv through the enter helper into `procsFiles`; resolves once it has exited and its output
 * (one line at least) is in. Children it leaves may hold the pipes open long after.
 */
function entered(procsFiles: string[], argv: string[]): Promise<{ out: string; signal: string | null }> {
  return new Promise((resolve) => {
    const child = spawn(enter!, ["-1", ...procsFiles, "--", ...argv], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let exited: { signal: string | null } | null = null;
    const settle = () => {
      if (exited && (out.includes("\n") || exited.signal)) resolve({ out, signal: exited.signal });
    };
    const collect = (chunk: Buffer) => {
      out += chunk;
      settle();
    };
    child.stdout.on("data", collect);
    child.stderr.on("data", collect);
    child.on("exit", (_code, signal) => {
      exited = { signal };
      settle();
    });
    child.on("close", () => resolve({ out, signal: exited?.signal ?? null }));
  });
}

describe.skipIf(opened.host === null || enter === null)("cgroup host", () => {
  let host: CgroupHost;
  beforeAll(() => {
    host = opened.host!;
  });
  afterAll(() => host.close());

  it("holds processes that each stay small to one memory cap together", async () => {
    const run = host.createRun({ memoryBytes: 256 << 20, processes: 64 });
    try {
      const { out } = await entered(run.procsFiles, [
        "/usr/bin/python3",
        "-c",
        // a child holds its share until each has taken its own or died (the pipe's end), however slow
        `import os
ready_r, ready_w = os.pipe()
go_r, go_w = os.pipe()
kids = []
for i in range(4):
    pid = os.fork()
    if pid == 0:
        hold = b"x" * (100 << 20)
        os.write(ready_w, b"r"); os.close(ready_w); os.close(go_w); os.read(go_r, 1); os._exit(0)
    kids.append(pid)
os.close(ready_w)
while os.read(ready_r, 8): pass
os.close(go_w)
print("held", sum(not os.WIFSIGNALED(os.waitpid(p, 0)[1]) for p in kids))`,
      ]);
      expect(Number(/held (\d+)/.exec(out)?.[1])).toBeLessThanOrEqual(2);
      expect(memoryKillOf(run.memoryCounters())).toBe("limit");
      expect(run.peakMemoryKb() ?? 0).toBeLessThanOrEqual(256 * 1024);
    } finally {
      await run.remove();
    }
  });

  it("counts a kill for a parent cgroup's shortage as outside the run, not at its own cap", async () => {
    const run = host.createRun({ memoryBytes: 1 << 30, processes: 16 });
    // the sandbox's own base cgroup, above every run: capped below the run's cap, as a host or a
    // parent cgroup short of memory would be
    const base = dirname(dirname(run.procsFiles[0]!));
    const cap = host.version === 1 ? "memory.limit_in_bytes" : "memory.max";
    writeFileSync(join(base, cap), String(128 << 20));
    try {
      const { out, signal } = await entered(run.procsFiles, [
        "/usr/bin/python3",
        "-c",
        "hold = b'x' * (300 << 20); print('survived')",
      ]);
      expect(out).not.toContain("survived");
      expect(signal).toBe("SIGKILL");
      const counters = run.memoryCounters();
      expect(counters.oomKills).toBeGreaterThan(0);
      expect(counters.limitHits).toBe(0);
      expect(memoryKillOf(counters)).toBe("outside");
    } finally {
      writeFileSync(join(base, cap), host.version === 1 ? "-1" : "max");
      await run.remove();
    }
  });

  it("bounds processes, and removal kills the ones left", async () => {
    const run = host.createRun({ memoryBytes: 512 << 20, processes: 20 });
    const { out } = await entered(run.procsFiles, ["/usr/bin/python3", "-c", FORK_UNTIL_REFUSED]);
    const forked = Number(/forked (\d+)/.exec(out)?.[1]);
    expect(forked).toBeGreaterThan(0);
    expect(forked).toBeLessThan(20);
    // the forked children sleep on without a PID namespace to end them
    expect(readFileSync(run.procsFiles[run.procsFiles.length - 1]!, "utf8").trim()).not.toBe("");
    await run.remove();
    expect(existsSync(run.procsFiles[0]!)).toBe(false);
  });

  it("applies a memory limit set after the cgroup was made", async () => {
    const run = host.createRun({ memoryBytes: 1 << 30, processes: 16 });
    try {
      run.setMemoryLimit(64 << 20);
      const { out, signal } = await entered(run.procsFiles, [
        "/usr/bin/python3",
        "-c",
        "hold = b'x' * (200 << 20); print('survived')",
      ]);
      expect(out).not.toContain("survived");
      expect(signal).toBe("SIGKILL");
      // with swap accounted, the cap that refuses is memory+swap's, whose failures a 6.x v1 kernel
      // does not count: the peak at the cap says it was the run's own
      expect(memoryKillOf(run.memoryCounters())).toBe("limit");
      run.setMemoryLimit(512 << 20);
      expect(
        (await entered(run.procsFiles, ["/usr/bin/python3", "-c", "hold = b'x' * (200 << 20); print('ok')"]))
          .out,
      ).toBe("ok\n");
    } finally {
      await run.remove();
    }
  });
});

describe.skipIf(!V2_ROOT || process.getuid?.() !== 0 || enter === null)("cgroup v2 parent", () => {
  it("creates run cgroups under sandbox.cgroup_parent", async () => {
    const parent = `/sys/fs/cgroup/codefeedback-test-${process.pid}`;
    mkdirSync(parent);
    try {
      const withParent = await openCgroupHost(parent);
      expect(withParent.problem).toBeNull();
      const run = withParent.host!.createRun({ memoryBytes: 64 << 20, processes: 8 });
      const { out } = await entered(run.procsFiles, ["/bin/cat", "/proc/self/cgroup"]);
      expect(out).toContain(`/codefeedback-test-${process.pid}/`);
      await run.remove();
      await withParent.host!.close();
    } finally {
      rmdirSync(parent);
    }
  });
});
