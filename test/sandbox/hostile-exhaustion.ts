// Hostile programs that try to exhaust the machine or outlive their run: fork and memory bombs, disk
// and output floods, endless loops, and daemons.
import { expect } from "vitest";
import {
  FORK_UNTIL_REFUSED,
  failedContained,
  type HostileProgram,
  py,
  sh,
  timedOut,
} from "./hostile-corpus.js";

export const EXHAUSTION_PROGRAMS: HostileProgram[] = [
  // --- exhaustion ---
  {
    name: "bash fork bomb",
    request: () => ({ ...sh(":(){ :|:& };:"), run_timeout: 2 }),
    check: (r) => expect(["Success", "Failed"]).toContain(r.status),
  },
  {
    name: "python forks until refused",
    request: () => py(FORK_UNTIL_REFUSED),
    check: (r, c) => {
      expect(r.status).toBe("Success");
      const forks = Number(/forked (\d+)/.exec(r.run_result?.stdout ?? "")?.[1]);
      expect(forks).toBeGreaterThan(0);
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
    name: "D forks forever",
    request: () => ({
      language: "D_ut",
      code: "import core.sys.posix.unistd;\nvoid main() { for (;;) fork(); }",
      run_timeout: 2,
    }),
    check: timedOut,
  },
  {
    name: "jest test spins forever",
    request: () => ({
      language: "jest",
      code: "test('spins', () => {\n  for (;;) {}\n});\n",
      run_timeout: 3,
    }),
    check: timedOut,
  },
  {
    name: "racket sleeps forever",
    request: () => ({ language: "racket", code: "#lang racket\n(sleep 1000000)", run_timeout: 2 }),
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
    name: "python forks eight children that each take most of the memory limit",
    needsCgroup: true,
    // each child stays under RLIMIT_AS; only the run's memory cgroup sees the sum. A child holds its
    // share until every child has taken its own or died (the pipe's end), however slow the machine.
    request: (c) =>
      py(`import os
ready_r, ready_w = os.pipe()
go_r, go_w = os.pipe()
kids = []
for i in range(8):
    pid = os.fork()
    if pid == 0:
        hold = b"x" * (${Math.floor(c.limits.memoryMb * 0.6)} << 20)
        os.write(ready_w, b"r"); os.close(ready_w); os.close(go_w)
        os.read(go_r, 1)
        os._exit(0)
    kids.append(pid)
os.close(ready_w)
while os.read(ready_r, 8): pass
os.close(go_w)
killed = sum(os.WIFSIGNALED(os.waitpid(pid, 0)[1]) for pid in kids)
print("held", len(kids) - killed)`),
    check: (r, c) => {
      expect(r.status).toBe("Success");
      const held = Number(/held (\d+)/.exec(r.run_result?.stdout ?? "")?.[1]);
      const eachMb = Math.floor(c.limits.memoryMb * 0.6);
      // every child that was not killed held its share at the same time as the others
      expect(held * eachMb).toBeLessThanOrEqual(c.limits.memoryMb + c.limits.memoryHeadroomMb);
      expect(held).toBeLessThan(8);
      expect(r.run_result?.peak_memory_kb).toBeLessThanOrEqual(
        (c.limits.memoryMb + c.limits.memoryHeadroomMb) * 1024,
      );
    },
  },
  {
    name: "C memory bomb spread over forked processes",
    needsCgroup: true,
    request: (c) => ({
      language: "c",
      code: `#include <stdlib.h>
#include <string.h>
#include <unistd.h>
int main(void) {
  for (int i = 0; i < 16; i++) if (fork() == 0) break;
  size_t size = (size_t)${Math.floor(c.limits.memoryMb * 0.8)} << 20;
  char *p = malloc(size);
  if (p) memset(p, 1, size);
  sleep(30);
  return 0;
}`,
      run_timeout: 3,
    }),
    check: (r, c) => {
      failedContained(r);
      expect(r.run_result?.peak_memory_kb).toBeLessThanOrEqual(
        (c.limits.memoryMb + c.limits.memoryHeadroomMb) * 1024,
      );
    },
  },
  {
    name: "python forges its peak memory report",
    needsCgroup: true,
    request: () =>
      py(`import glob
hold = b"x" * (100 << 20)
for path in glob.glob("/run/*") + glob.glob("/run/*/*"):
    try: open(path, "w").write("1\\n")
    except OSError: pass
print("wrote")`),
    check: (r) => {
      expect(r.status).toBe("Success");
      expect(r.run_result?.peak_memory_kb).toBeGreaterThan(100 * 1024);
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
