// Hostile programs that try to exhaust the machine or outlive their run: fork and memory bombs, disk
// and output floods, endless loops, and daemons.
import { expect } from "vitest";
import { blocked, failedContained, type HostileProgram, py, sh, timedOut } from "./hostile-corpus.js";

export const EXHAUSTION_PROGRAMS: HostileProgram[] = [
  // --- exhaustion ---
  {
    name: "bash fork bomb",
    request: () => ({ ...sh(":(){ :|:& };:"), run_timeout: 2 }),
    check: (r) => expect(["Success", "Failed"]).toContain(r.status),
  },
  {
    name: "python forks until refused",
    request: () =>
      py(`import os, time
n = 0
try:
    while n < 100000:
        if os.fork() == 0:
            time.sleep(30); os._exit(0)
        n += 1
except OSError: pass
print("blocked", n)`),
    check: (r, c) => {
      blocked(r, c);
      const forks = Number(/blocked (\d+)/.exec(r.run_result?.stdout ?? "")?.[1]);
      expect(forks).toBeLessThan(c.limits.processes);
    },
  },
  {
    name: "C forks forever",
    request: () => ({
      language: "c",
      code: "#include <unistd.h>\nint main(void) { for (;;) fork(); }",
      run_timeout: 2,
    }),
    check: timedOut,
  },
  {
    name: "python memory bomb",
    request: () => py("x = []\nwhile True: x.append(bytearray(64 << 20))"),
    check: (r) => {
      failedContained(r);
      expect(r.run_result?.stderr).toContain("MemoryError");
    },
  },
  {
    name: "C memory bomb (malloc and touch)",
    request: () => ({
      language: "c",
      code: `#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(void) { for (long i = 0; i < 1000; i++) { char *p = malloc(64 << 20); if (!p) { puts("blocked"); return 3; } memset(p, 1, 64 << 20); } puts("ESCAPED"); }`,
    }),
    check: (r) => {
      failedContained(r);
      expect(r.run_result?.stdout).toContain("blocked");
    },
  },
  {
    name: "node heap bomb",
    request: () => ({ language: "nodejs", code: "const a = []; for (;;) a.push(new Array(1e6).fill(1));" }),
    check: failedContained,
  },
  {
    name: "bash fills the work dir",
    needsCappedWorkDir: true,
    request: () =>
      sh(
        "i=0; while dd if=/dev/zero of=f$i bs=1M count=4 2>/dev/null; do i=$((i+1)); done; echo blocked $(du -sm . | cut -f1)",
      ),
    check: (r, c) => {
      expect(r.run_result?.stdout).toContain("blocked");
      const mb = Number(/blocked (\d+)/.exec(r.run_result?.stdout ?? "")?.[1]);
      expect(mb).toBeLessThanOrEqual(c.limits.workDirMb + 1);
    },
  },
  {
    name: "python fills /tmp and /dev/shm",
    request: () =>
      py(`import os
total = 0
for d in ["/tmp", "/dev/shm"]:
    for i in range(1000):
        try:
            with open(f"{d}/f{i}", "wb") as f: f.write(b"x" * (1 << 20))
            total += 1
        except OSError: break
print("blocked", total)`),
    check: (r, c) => {
      const mb = Number(/blocked (\d+)/.exec(r.run_result?.stdout ?? "")?.[1]);
      expect(mb).toBeLessThanOrEqual(2 * c.limits.tmpMb);
    },
  },
  {
    name: "python writes stdout forever",
    request: () => py("import sys\nwhile True: sys.stdout.write('y' * 65536)"),
    check: (r, c) => {
      failedContained(r);
      expect(r.run_result?.stdout_truncated).toBe(true);
      expect(Buffer.byteLength(r.run_result?.stdout ?? "")).toBeLessThanOrEqual(c.limits.maxOutputBytes);
    },
  },
  {
    name: "bash writes stderr forever without newlines",
    request: () => sh("yes -- ---------- | tr -d '\\n' >&2"),
    check: (r, c) => {
      failedContained(r);
      expect(r.run_result?.stderr_truncated).toBe(true);
      expect(Buffer.byteLength(r.run_result?.stderr ?? "")).toBeLessThanOrEqual(c.limits.maxOutputBytes);
    },
  },
  {
    name: "python sleeps forever",
    request: () => ({ ...py("import time\ntime.sleep(10**6)"), run_timeout: 1 }),
    check: timedOut,
  },
  {
    name: "bash spins forever",
    request: () => ({ ...sh("while :; do :; done"), run_timeout: 1 }),
    check: timedOut,
  },
  {
    name: "bash closes its output and keeps running",
    request: () => ({ ...sh("exec 1>&- 2>&-; sleep 100"), run_timeout: 1 }),
    check: timedOut,
  },
  {
    name: "python double-forks a daemon that outlives the run",
    request: () =>
      py(`import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(60); open("/work/daemon-was-here", "w").write("x"); os._exit(0)
    os._exit(0)
print("parent done")`),
    check: (r) => {
      expect(r.status).toBe("Success");
      expect(r.run_result?.stdout).toContain("parent done");
    },
  },
  {
    name: "bash leaves setsid and nohup daemons",
    request: () =>
      sh("setsid sleep 1000 & nohup sleep 1000 >/dev/null 2>&1 & (sleep 1000 &); disown -a; echo started"),
    check: (r) => {
      expect(r.status).toBe("Success");
      expect(r.run_result?.stdout).toContain("started");
    },
  },
];
