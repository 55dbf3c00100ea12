// Sandboxes built ahead of their requests: each still serves exactly one step, nothing of one request
// is visible to the next, a prepared sandbox that died while waiting is replaced, and closing stops
// every one of them.
import { readdirSync, readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EmbeddedSandbox } from "../../pipeline/sandbox/index.js";
import {
  descendsFromUs,
  probeIsolationReport,
  RUNNING_AS_ROOT,
  testConfig,
  waitForNoProcesses,
} from "./helpers.js";

const report = await probeIsolationReport();

/** Host pids of the launchers waiting for orders in sandboxes this process built ahead. */
function waitingLaunchers(): number[] {
  return readdirSync("/proc")
    .filter((pid) => /^\d+$/.test(pid))
    .filter((pid) => {
      try {
        const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
        return argv[0]?.endsWith("/launch") && argv[1] === "--wait" && descendsFromUs(pid);
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe.skipIf(!report.prepared)("sandboxes built ahead", () => {
  let sandbox: EmbeddedSandbox;
  let uids: number[] = [];

  beforeAll(async () => {
    sandbox = new EmbeddedSandbox(testConfig({ workers: 1 }));
    const isolation = await sandbox.isolation();
    expect(isolation.prepared).toBe(true);
    // gcc built the launcher, so it built the spawner too: these runs are forked by it
    expect(isolation.spawner).toBe("built");
    uids = isolation.uids;
  });
  afterAll(() => sandbox.close());

  it("give every request a fresh sandbox: nothing of one run is visible to the next", async () => {
    const first = await sandbox.run({
      language: "bash",
      code: "echo secret > /tmp/left; echo secret > /dev/shm/left; echo secret > left; sleep 1000 & echo $$",
    });
    expect(first.status).toBe("Success");
    await sandbox.settled();
    const second = await sandbox.run({
      language: "bash",
      code: "ls -A /tmp /dev/shm .; ls /proc | grep -c '^[0-9]'",
    });
    expect(second.status).toBe("Success");
    expect(second.run_result?.stdout).not.toContain("left");
    // the PID namespace is new too: only its own few processes, no sleeping leftover
    expect(Number((second.run_result?.stdout ?? "").trim().split("\n").pop())).toBeLessThan(6);
  });

  it("run the compile and the run step of one request in two sandboxes over one work dir", async () => {
    const response = await sandbox.run({
      language: "c",
      code: '#include <stdio.h>\n#include <unistd.h>\nint main(void) { printf("%d\\n", (int)getpid()); return 0; }',
    });
    expect(response.status, JSON.stringify(response)).toBe("Success");
    // pid 1 is bwrap's init, 2 the launcher: the program is the launcher's first child in a new namespace
    expect(response.run_result?.stdout).toBe("3\n");
  });

  it("replace a prepared sandbox that died while it waited", async () => {
    await sandbox.run({ language: "bash", code: "true" });
    await sandbox.settled();
    const waiting = waitingLaunchers();
    expect(waiting.length).toBeGreaterThan(0);
    for (const pid of waiting) process.kill(pid, "SIGKILL");
    const response = await sandbox.run({ language: "python", code: "print('fresh')" });
    expect(response.status).toBe("Success");
    expect(response.run_result?.stdout).toBe("fresh\n");
  });

  it("stop every sandbox built ahead when closed", async () => {
    const other = new EmbeddedSandbox(testConfig({ workers: 1, uid_base: 64800 }));
    await other.run({ language: "bash", code: "true" });
    await other.settled();
    const otherUids = (await other.isolation()).uids;
    await other.close();
    if (RUNNING_AS_ROOT) expect(await waitForNoProcesses(otherUids, { prepared: true })).toEqual([]);
    expect(uids.length).toBe(1);
  });
});

describe.skipIf(report.mode === null)("without building ahead", () => {
  it("builds each sandbox when its step starts, with the same results", async () => {
    const sandbox = new EmbeddedSandbox(testConfig({ workers: 1 }), { prepare: false });
    try {
      expect((await sandbox.isolation()).prepared).toBe(false);
      const response = await sandbox.run({ language: "python", code: "print(input()[::-1])", stdin: "abc" });
      expect(response.run_result?.stdout).toBe("cba\n");
      expect(waitingLaunchers()).toEqual([]);
    } finally {
      await sandbox.close();
    }
  });
});

describe.skipIf(!report.prepared)("the usage report of a sandbox, built ahead or on demand", () => {
  it("comes on the launcher's pipe, out of the program's reach, and holds without cgroups", async () => {
    // no cgroups: the launcher's figure is the only one, so a forged one would show
    const sandbox = new EmbeddedSandbox(testConfig({ workers: 1, cgroups: "off", uid_base: 64700 }));
    try {
      const code = [
        "import os",
        "x = bytearray(96 * 1024 * 1024)",
        // a usage file it could scribble on (it would forge its peak memory) is not there
        "print(os.path.exists('/run/sandbox-usage'))",
        "for fd in range(3, 64):",
        "    try:",
        "        os.write(fd, b'network 0\\n1\\n')",
        "    except OSError:",
        "        pass",
        // nor through its launcher's descriptors (the launcher is undumpable: /proc keeps it out)
        "try:",
        "    parent = f'/proc/{os.getppid()}/fd'",
        "    for name in os.listdir(parent):",
        "        try:",
        "            with open(f'{parent}/{name}', 'w') as f:",
        "                f.write('network 0\\n1\\n')",
        "        except OSError:",
        "            pass",
        "except OSError:",
        "    pass",
      ].join("\n");
      const runs = [];
      // the first request's sandbox is built on demand, the next ones ahead: neither has a usage file
      for (let i = 0; i < 3; i++) runs.push(await sandbox.run({ language: "python", code }));
      for (const [i, run] of runs.entries()) {
        expect(run.status, JSON.stringify(run)).toBe("Success");
        expect(run.run_result?.peak_memory_kb).toBeGreaterThan(96 * 1024);
        expect(run.run_result?.stdout, `run ${i}`).toBe("False\n");
      }
    } finally {
      await sandbox.close();
    }
  });
});
