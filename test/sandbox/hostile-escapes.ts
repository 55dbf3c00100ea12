// Hostile programs that try to get out: to the network, to files and secrets that are not theirs,
// to writable places outside the work dir, and to privileges.
import { existsSync } from "node:fs";
import { expect } from "vitest";
import { blocked, type HostileProgram, py, sh } from "./hostile-corpus.js";

export const ESCAPE_PROGRAMS: HostileProgram[] = [
  // --- network: only the namespace's own loopback, no route out, and the host's loopback is another
  // namespace's. Every attempt targets canaries on the host's loopback: should isolation ever break,
  // nothing leaves the machine.
  {
    name: "python finds no interface but loopback and no route",
    request: () =>
      py(`interfaces = [line.split(":")[0].strip() for line in open("/proc/net/dev").readlines()[2:]]
routes = open("/proc/net/route").readlines()[1:] + open("/proc/net/ipv6_route").readlines()
# the IPv6 table lists loopback's own entries; a way out would name another interface
out = [r for r in routes if r.split()[-1] not in ("lo",)]
print("blocked" if interfaces == ["lo"] and out == [] else f"ESCAPED {interfaces} {out}")`),
    check: blocked,
  },
  {
    // vsock is not network-namespaced: on a VM, the hypervisor would be one connect() away. The
    // program only tries to open the socket; nothing is ever sent.
    name: "python opens AF_VSOCK and AF_PACKET sockets",
    request: () =>
      py(`import socket
opened = []
for family, kind in [(socket.AF_VSOCK, socket.SOCK_STREAM), (socket.AF_PACKET, socket.SOCK_RAW)]:
    try:
        socket.socket(family, kind).close(); opened.append(family)
    except OSError: pass
print("blocked" if not opened else f"ESCAPED {opened}")`),
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
    name: "python UDP datagrams to the host's 127.0.0.1",
    request: (c) =>
      py(`import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(5): s.sendto(b"x", ("127.0.0.1", ${c.udpCanaryPort}))
s.settimeout(1)
try:
    s.recvfrom(16); print("ESCAPED")
except OSError as e: print("blocked", e)`),
    check: blocked,
  },
  {
    name: "python DNS: no resolver configured, and a query to the host's loopback goes nowhere",
    request: (c) =>
      py(`import socket
resolvers = [l for l in open("/etc/resolv.conf") if l.split()[:1] == ["nameserver"]]
query = bytes.fromhex("abcd01000001000000000000") + b"".join(bytes([len(p)]) + p.encode() for p in ["canary", "invalid"]) + bytes([0, 0, 1, 0, 1])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.sendto(query, ("127.0.0.1", ${c.udpCanaryPort}))
s.settimeout(1)
try:
    s.recvfrom(512); print("ESCAPED answer")
except OSError:
    print("blocked" if not resolvers else f"ESCAPED {resolvers}")`),
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
    name: "go HTTP GET to the host's loopback",
    request: (c) => ({
      language: "go",
      code: `package main
import ("fmt"; "net/http"; "time")
func main() {
	c := http.Client{Timeout: 2 * time.Second}
	if _, err := c.Get("http://127.0.0.1:${c.canaryPort}/"); err != nil { fmt.Println("blocked", err) } else { fmt.Println("ESCAPED") }
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
    name: "request files under /mnt with a path that climbs out",
    request: () => ({
      ...py("print('ran')"),
      files: { "/mnt/../etc/evil": Buffer.from("x").toString("base64") },
    }),
    check: (r) => {
      expect(r.status).toBe("SandboxError");
      expect(r.message).toContain("outside the work dir");
    },
  },
  {
    name: "python writes /mnt and links from it to host files: the run's own /mnt, fetched without links",
    request: () => ({
      ...py(`import os
open("/mnt/codefeedback-hostile", "w").write("x")
os.symlink("/etc/passwd", "/mnt/leak"); os.symlink("/etc", "/mnt/etc")
print("made")`),
      fetch_files: ["/mnt/leak", "/mnt/etc/passwd", "/mnt/../etc/passwd"],
    }),
    check: (r) => {
      expect(r.status).toBe("Success");
      expect(r.files).toEqual({});
      expect(existsSync("/mnt/codefeedback-hostile")).toBe(false);
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
  {
    name: "go writes into the build cache every sandbox shares",
    request: () => ({
      language: "go",
      code: `package main
import ("fmt"; "os"; "path/filepath")
func main() {
	cache := os.Getenv("GOCACHE")
	entries, _ := os.ReadDir(filepath.Join(cache, "00"))
	err1 := os.WriteFile(filepath.Join(cache, "00", "evil-d"), []byte("x"), 0o644)
	err2 := os.WriteFile(filepath.Join(cache, "evil"), []byte("x"), 0o644)
	var err3 error = nil
	if len(entries) > 0 { err3 = os.WriteFile(filepath.Join(cache, "00", entries[0].Name()), []byte("x"), 0o644) } else { err3 = fmt.Errorf("empty") }
	if err1 != nil && err2 != nil && err3 != nil { fmt.Println("blocked", cache) } else { fmt.Println("ESCAPED", cache) }
}`,
    }),
    check: blocked,
  },
  // --- the languages added for SandboxFusion's runner tests ---
  {
    name: "D connects to the host's loopback",
    request: (c) => ({
      language: "D_ut",
      code: `import std.socket, std.stdio;
void main() {
  try { new TcpSocket(new InternetAddress("127.0.0.1", ${c.canaryPort})); writeln("ESCAPED"); }
  catch (Exception e) { writeln("blocked ", e.msg); }
}`,
    }),
    check: blocked,
  },
  {
    name: "kotlin_script reads /etc/shadow, the secret file and the environment",
    request: (c) => ({
      language: "kotlin_script",
      code: `val read = listOf("/etc/shadow", ${JSON.stringify(c.secretFile)}).filter { runCatching { java.io.File(it).readText() }.isSuccess }
val env = listOf("CODEFEEDBACK_TEST_CANARY_SECRET", "OPENAI_API_KEY").filter { System.getenv(it) != null }
println(if (read.isEmpty() && env.isEmpty()) "blocked" else "ESCAPED " + read + env)`,
    }),
    check: blocked,
  },
  {
    name: "racket reads the secret file and writes into /usr",
    request: (c) => ({
      language: "racket",
      code: `#lang racket
(define (works? thunk) (with-handlers ([exn:fail? (lambda (e) #f)]) (thunk) #t))
(define read-secret (works? (lambda () (file->string ${JSON.stringify(c.secretFile)}))))
(define wrote (works? (lambda () (display-to-file "x" "/usr/lib/racket/evil" #:exists 'replace))))
(displayln (if (or read-secret wrote) "ESCAPED" "blocked"))`,
    }),
    check: blocked,
  },
  {
    name: "verilog $fopen writes /etc and reads the secret file",
    request: (c) => ({
      language: "verilog",
      code: `module m;
  integer w, r;
  initial begin
    w = $fopen("/etc/evil", "w");
    r = $fopen(${JSON.stringify(c.secretFile)}, "r");
    if (w == 0 && r == 0) $display("blocked"); else $display("ESCAPED");
    $finish;
  end
endmodule`,
    }),
    check: blocked,
  },
  {
    // the preload every jest run loads sits in the read-only tools dir: no run can poison the next
    name: "jest test reads secrets, writes jest's preload and Debian's jest, connects to the host",
    request: (c) => ({
      language: "jest",
      code: `import { appendFileSync, readFileSync, writeFileSync } from "fs";
import { connect } from "net";
const works = (attempt: () => unknown): boolean => { try { attempt(); return true; } catch { return false; } };
test("gets out", async () => {
  const got: string[] = [];
  for (const path of ["/etc/shadow", ${JSON.stringify(c.secretFile)}]) if (works(() => readFileSync(path))) got.push(path);
  if (works(() => appendFileSync("/opt/sandbox-tools/jest-preload.cjs", ""))) got.push("preload");
  if (works(() => writeFileSync("/usr/share/nodejs/jest/evil.js", "x"))) got.push("jest");
  for (const name of ["CODEFEEDBACK_TEST_CANARY_SECRET", "OPENAI_API_KEY"]) if (process.env[name] !== undefined) got.push(name);
  const reached = await new Promise<boolean>((resolve) => {
    const socket = connect(${c.canaryPort}, "127.0.0.1");
    socket.on("connect", () => resolve(true));
    socket.on("error", () => resolve(false));
  });
  if (reached) got.push("loopback");
  process.stdout.write(got.length === 0 ? "blocked\\n" : \`ESCAPED \${got.join(" ")}\\n\`);
});
`,
    }),
    check: (r, c) => {
      blocked(r, c);
      expect(existsSync("/usr/share/nodejs/jest/evil.js")).toBe(false);
    },
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
];
