// Hostile programs the sandbox must contain. Each one tries one escape or exhaustion and says what
// it got; `check` asserts the run was contained and reported with the right status. Programs print
// "blocked" when the attempt failed the way isolation should make it fail, and "ESCAPED" otherwise.
import { expect } from "vitest";
import type { RunCodeRequest, RunCodeResponse } from "../../pipeline/sandbox/index.js";

export interface HostileContext {
  /** a TCP server on the host's 127.0.0.1 the sandbox must not reach */
  canaryPort: number;
  /** a value only the host's environment and a host file hold */
  secret: string;
  /** a host file holding the secret, outside any sandbox */
  secretFile: string;
  /** this repository's directory on the host */
  projectDir: string;
  /** the test process's host pid */
  hostPid: number;
  limits: { maxOutputBytes: number; workDirMb: number; tmpMb: number; processes: number };
}

export interface HostileProgram {
  name: string;
  /** only meaningful (and only safe to run) when work dirs are size-capped tmpfs mounts */
  needsCappedWorkDir?: boolean;
  request(ctx: HostileContext): RunCodeRequest;
  check(response: RunCodeResponse, ctx: HostileContext): void;
}

const py = (code: string) => ({ language: "python", code });
const sh = (code: string) => ({ language: "bash", code });

/** The program ran to the end, reported its attempt as blocked, and never leaked the secret. */
function blocked(response: RunCodeResponse, ctx: HostileContext): void {
  const out = `${response.run_result?.stdout ?? ""}${response.run_result?.stderr ?? ""}`;
  expect(out).not.toContain("ESCAPED");
  expect(out).not.toContain(ctx.secret);
  expect(response.run_result?.stdout ?? "").toContain("blocked");
  expect(response.status).toBe("Success");
}

function notLeaked(response: RunCodeResponse, ctx: HostileContext): void {
  expect(JSON.stringify(response)).not.toContain(ctx.secret);
}

/** Ended by us or by a limit: a Failed run, never a SandboxError, never a Success. */
function failedContained(response: RunCodeResponse): void {
  expect(response.status).toBe("Failed");
  expect(response.run_result).not.toBeNull();
}

function timedOut(response: RunCodeResponse): void {
  expect(response.status).toBe("Failed");
  expect(response.run_result?.status).toBe("TimeLimitExceeded");
}

export const HOSTILE_PROGRAMS: HostileProgram[] = [
  // --- network: no route out, and the host's loopback is another namespace's ---
  {
    name: "python TCP connect to the internet",
    request: () =>
      py(`import socket
try:
    socket.create_connection(("1.1.1.1", 53), timeout=2); print("ESCAPED")
except OSError as e: print("blocked", e)`),
    check: blocked,
  },
  {
    name: "python TCP connect to a server on the host's 127.0.0.1",
    request: (c) =>
      py(`import socket
try:
    socket.create_connection(("127.0.0.1", ${c.canaryPort}), timeout=2); print("ESCAPED")
except OSError as e: print("blocked", e)`),
    check: blocked,
  },
  {
    name: "python UDP datagram out",
    request: () =>
      py(`import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    s.sendto(b"x", ("8.8.8.8", 53)); print("ESCAPED")
except OSError as e: print("blocked", e)`),
    check: blocked,
  },
  {
    name: "python DNS lookup",
    request: () =>
      py(`import socket
try:
    socket.getaddrinfo("example.com", 80); print("ESCAPED")
except OSError as e: print("blocked", e)`),
    check: blocked,
  },
  {
    name: "bash /dev/tcp to the host's loopback",
    request: (c) =>
      sh(`if exec 3<>/dev/tcp/127.0.0.1/${c.canaryPort}; then echo ESCAPED; else echo blocked; fi`),
    check: blocked,
  },
  {
    name: "node net.connect to the host's loopback",
    request: (c) => ({
      language: "nodejs",
      code: `const s = require("net").connect(${c.canaryPort}, "127.0.0.1");
s.on("connect", () => { console.log("ESCAPED"); process.exit(0); });
s.on("error", (e) => console.log("blocked", e.code));`,
    }),
    check: blocked,
  },
  {
    name: "C raw ICMP socket",
    request: () => ({
      language: "c",
      code: `#include <stdio.h>
#include <sys/socket.h>
#include <netinet/in.h>
int main(void) { int s = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP); puts(s < 0 ? "blocked" : "ESCAPED"); return 0; }`,
    }),
    check: blocked,
  },
  {
    name: "go HTTP GET",
    request: () => ({
      language: "go",
      code: `package main
import ("fmt"; "net/http"; "time")
func main() {
	c := http.Client{Timeout: 2 * time.Second}
	if _, err := c.Get("http://1.1.1.1/"); err != nil { fmt.Println("blocked", err) } else { fmt.Println("ESCAPED") }
}`,
    }),
    check: blocked,
  },
  // --- reading what is not theirs ---
  {
    name: "python reads /etc/shadow",
    request: () =>
      py(`try:
    print("ESCAPED", open("/etc/shadow").read()[:20])
except OSError as e: print("blocked", e)`),
    check: blocked,
  },
  {
    name: "python lists /root and $HOME",
    request: () =>
      py(`import os
home = os.environ.get("HOME")
try:
    os.listdir("/root"); print("ESCAPED /root")
except OSError: pass
print("blocked" if home == "/tmp" and os.listdir(home) == [] else "ESCAPED home " + str(home))`),
    check: blocked,
  },
  {
    name: "python reads the project dir",
    request: (c) =>
      py(`try:
    print("ESCAPED", open(${JSON.stringify(`${c.projectDir}/package.json`)}).read()[:40])
except OSError as e: print("blocked", e)`),
    check: blocked,
  },
  {
    name: "python reads a secret file in the host's /tmp",
    request: (c) =>
      py(`try:
    print("ESCAPED", open(${JSON.stringify(c.secretFile)}).read())
except OSError as e: print("blocked", e)`),
    check: blocked,
  },
  {
    name: "python scans every /proc/*/environ and /proc/1/environ",
    request: () =>
      py(`import os
found = []
for pid in os.listdir("/proc"):
    if pid.isdigit():
        try: found.append(open(f"/proc/{pid}/environ", "rb").read().decode(errors="replace"))
        except OSError: pass
print(" ".join(found)); print("blocked")`),
    check: blocked,
  },
  {
    name: "python dumps its own environment",
    request: () =>
      py(`import os
bad = [k for k in os.environ if "KEY" in k or "TOKEN" in k or "SECRET" in k or "CANARY" in k]
print(dict(os.environ)); print("ESCAPED" if bad else "blocked")`),
    check: blocked,
  },
  {
    name: "perl prints %ENV",
    request: () => ({
      language: "perl",
      code: `print "$_=$ENV{$_}\\n" for sort keys %ENV; print "blocked\\n";`,
    }),
    check: blocked,
  },
  {
    name: "bash sees no host processes",
    request: (c) =>
      sh(
        `n=$(ls /proc | grep -c '^[0-9]'); if [ "$n" -lt 10 ] && ! kill -0 ${c.hostPid} 2>/dev/null; then echo blocked $n; else echo ESCAPED $n; fi`,
      ),
    check: blocked,
  },
  {
    name: "ruby lists /usr/local and /etc secrets",
    request: () => ({
      language: "ruby",
      code: `seen = Dir.glob("/usr/local/**/*") + %w[/etc/npmrc /etc/pip.conf /etc/environment /etc/shadow /etc/ssh].select { |f| File.exist?(f) }
puts(seen.empty? ? "blocked" : "ESCAPED #{seen.first(5)}")`,
    }),
    check: blocked,
  },
  {
    name: "java reads /etc/shadow",
    request: () => ({
      language: "java",
      code: `import java.nio.file.*;
public class Main { public static void main(String[] a) {
  try { System.out.println("ESCAPED " + Files.readString(Path.of("/etc/shadow"))); }
  catch (Exception e) { System.out.println("blocked " + e); } } }`,
    }),
    check: blocked,
  },
  // --- writing outside the work dir ---
  {
    name: "python writes into /usr/bin, /etc and /",
    request: () =>
      py(`ok = 0
for p in ["/usr/bin/evil", "/etc/evil", "/evil", "../../evil", "/work/../evil"]:
    try: open(p, "w").write("x"); print("ESCAPED", p)
    except OSError: ok += 1
print("blocked" if ok == 5 else "ESCAPED")`),
    check: blocked,
  },
  {
    name: "request files with a path that climbs out",
    request: () => ({
      ...py("print('ran')"),
      files: { "../../evil.txt": Buffer.from("x").toString("base64") },
    }),
    check: (r) => {
      expect(r.status).toBe("SandboxError");
      expect(r.message).toContain("outside the work dir");
      expect(r.run_result).toBeNull();
    },
  },
  {
    name: "request files with an absolute host path",
    request: () => ({
      ...py("print('ran')"),
      files: { "/etc/cron.d/evil": Buffer.from("x").toString("base64") },
    }),
    check: (r) => {
      expect(r.status).toBe("SandboxError");
      expect(r.message).toContain("outside the work dir");
    },
  },
  {
    name: "fetch_files through symbolic links to host files",
    request: () => ({
      ...sh("ln -s /etc/passwd leak && ln -s / root && mkdir d && ln -s /etc d/etc && echo made"),
      fetch_files: ["leak", "root/etc/passwd", "d/etc/passwd", "../../../../etc/passwd", "/etc/passwd"],
    }),
    check: (r) => {
      expect(r.status).toBe("Success");
      expect(r.files).toEqual({});
    },
  },
  {
    name: "bash hard-links a system file into the work dir",
    request: () =>
      sh(
        "if ln /usr/bin/bash hl 2>/dev/null || ln /etc/passwd hp 2>/dev/null; then echo ESCAPED; else echo blocked; fi",
      ),
    check: blocked,
  },
  // --- privileges ---
  {
    name: "bash creates a user namespace to regain capabilities",
    // userns mode forbids new namespaces; setuid mode allows them, but read-only mounts stay locked
    request: () =>
      sh(
        "if unshare -rm sh -c 'mount -o remount,rw /usr && echo x > /usr/bin/evil' 2>/dev/null; then echo ESCAPED; else echo blocked; fi",
      ),
    check: blocked,
  },
  {
    name: "bash tries su, mount and a setuid binary",
    request: () =>
      sh(`su -c id root </dev/null >/dev/null 2>&1 && echo ESCAPED su
mount -t tmpfs none /tmp 2>/dev/null && echo ESCAPED mount
[ "$(id -u)" != 0 ] && echo blocked`),
    check: blocked,
  },
  {
    name: "python ptrace-attaches to pid 1 and its parent",
    request: () =>
      py(`import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
r1 = libc.ptrace(16, 1, 0, 0)
r2 = libc.ptrace(16, os.getppid(), 0, 0)
print("blocked" if r1 != 0 and r2 != 0 else f"ESCAPED {r1} {r2}")`),
    check: blocked,
  },
  {
    name: "bash kills its parent, pid 1 and every process it can",
    request: () => sh("kill -9 $PPID; kill -9 1; kill -9 -1; sleep 1; echo still-here"),
    check: (r) => {
      expect(["Success", "Failed"]).toContain(r.status);
      expect(r.run_result).not.toBeNull();
    },
  },
  {
    name: "bash signals the host test process by pid",
    request: (c) => sh(`if kill -9 ${c.hostPid} 2>/dev/null; then echo ESCAPED; else echo blocked; fi`),
    check: blocked,
  },
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

export { notLeaked };
