// The sandbox section of the config: everything has a default, mistakes are refused, and the
// seccomp filter is a well-formed classic BPF program.
import { describe, expect, it } from "vitest";
import {
  createCodeRunner,
  EmbeddedSandbox,
  findLanguage,
  HttpSandboxClient,
  runStatus,
  sandboxConfigSchema,
} from "../../pipeline/sandbox/index.js";
import { sandboxSeccompFilter, X86_64_SYSCALLS } from "../../pipeline/sandbox/seccomp.js";

describe("sandboxConfigSchema", () => {
  it("parses {} to bwrap isolation with SandboxFusion's default timeouts", () => {
    const config = sandboxConfigSchema.parse({});
    expect(config.isolation).toBe("bwrap");
    expect(config.url).toBeUndefined();
    expect(config.compile_timeout_s).toBe(10);
    expect(config.run_timeout_s).toBe(10);
    expect(config.limits.processes).toBeGreaterThan(0);
  });

  it("refuses unknown keys and bad values", () => {
    expect(sandboxConfigSchema.safeParse({ isolaton: "none" }).success).toBe(false);
    expect(sandboxConfigSchema.safeParse({ isolation: "docker" }).success).toBe(false);
    expect(sandboxConfigSchema.safeParse({ limits: { processes: 0 } }).success).toBe(false);
    expect(sandboxConfigSchema.safeParse({ url: "not a url" }).success).toBe(false);
  });

  it("creates an embedded sandbox, or a client when url is set", async () => {
    const embedded = createCodeRunner(sandboxConfigSchema.parse({}));
    const remote = createCodeRunner(sandboxConfigSchema.parse({ url: "http://127.0.0.1:1" }));
    expect(embedded).toBeInstanceOf(EmbeddedSandbox);
    expect(remote).toBeInstanceOf(HttpSandboxClient);
    expect((remote as HttpSandboxClient).endpoints).toEqual(["http://127.0.0.1:1/run_code"]);
    await embedded.close();
    await remote.close();
  });
});

describe("status rules", () => {
  const ok = { status: "Finished" as const, execution_time: 0, return_code: 0, stdout: "", stderr: "" };
  it("follows SandboxFusion", () => {
    expect(runStatus(null, ok)).toBe("Success");
    expect(runStatus(ok, ok)).toBe("Success");
    expect(runStatus({ ...ok, return_code: 1 }, null)).toBe("Failed");
    expect(runStatus(ok, { ...ok, status: "TimeLimitExceeded", return_code: null })).toBe("Failed");
    expect(runStatus(null, { ...ok, status: "Error" })).toBe("SandboxError");
    expect(runStatus(null, null)).toBe("SandboxError");
  });
});

describe("language ids", () => {
  it("knows SandboxFusion's ids and common aliases", () => {
    for (const id of [
      "python",
      "cpp",
      "nodejs",
      "go",
      "java",
      "php",
      "csharp",
      "bash",
      "typescript",
      "rust",
      "lua",
      "R",
      "perl",
      "ruby",
      "sql",
      "scala",
    ]) {
      expect(findLanguage(id)?.id).toBe(id);
    }
    expect(findLanguage("JavaScript")?.id).toBe("nodejs");
    expect(findLanguage("r")?.id).toBe("R");
    expect(findLanguage("fortran")).toBeUndefined();
  });
});

/** Runs our classic-BPF program on one seccomp_data (only the opcodes the filter uses). */
function evaluateFilter(filter: Buffer, data: { nr: number; arch: number; arg0: number }): number {
  let pc = 0;
  let acc = 0;
  for (let steps = 0; steps < 1000; steps++) {
    const code = filter.readUInt16LE(pc * 8);
    const jt = filter.readUInt8(pc * 8 + 2);
    const jf = filter.readUInt8(pc * 8 + 3);
    const k = filter.readUInt32LE(pc * 8 + 4);
    if (code === 0x20) acc = k === 0 ? data.nr : k === 4 ? data.arch : k === 16 ? data.arg0 : 0;
    else if (code === 0x06) return k;
    else if (code === 0x15) pc += acc === k ? jt : jf;
    else if (code === 0x35) pc += acc >= k ? jt : jf;
    else if (code === 0x45) pc += (acc & k) !== 0 ? jt : jf;
    else throw new Error(`unexpected opcode ${code}`);
    pc++;
  }
  throw new Error("filter did not return");
}

describe.skipIf(process.arch !== "x64")("seccomp filter", () => {
  const filter = sandboxSeccompFilter()!;
  const X86_64 = 0xc000003e;
  const ALLOW = 0x7fff0000;
  const EPERM = 0x00050001;
  const run = (nr: number, arg0 = 0, arch = X86_64) => evaluateFilter(filter, { nr, arch, arg0 });

  it("refuses exactly the listed calls and allows every other", () => {
    const denied = new Set(Object.values(X86_64_SYSCALLS.denied));
    for (let nr = 0; nr < 500; nr++) {
      if (nr === X86_64_SYSCALLS.clone || nr === X86_64_SYSCALLS.clone3 || nr === X86_64_SYSCALLS.socket)
        continue;
      expect(run(nr), `syscall ${nr}`).toBe(denied.has(nr) ? EPERM : ALLOW);
    }
  });

  it("lets threads and forks clone, but not into new namespaces", () => {
    expect(run(X86_64_SYSCALLS.clone, 0x3d0f00)).toBe(ALLOW); // pthread_create's flags
    expect(run(X86_64_SYSCALLS.clone, 0x01200011)).toBe(ALLOW); // fork's flags
    expect(run(X86_64_SYSCALLS.clone, 0x10000000)).toBe(EPERM); // CLONE_NEWUSER
    expect(run(X86_64_SYSCALLS.clone, 0x40000000 | 0x11)).toBe(EPERM); // CLONE_NEWNET
    expect(run(X86_64_SYSCALLS.clone3)).toBe(0x00050000 | 38); // ENOSYS: libc falls back to clone
  });

  it("opens sockets of the families a network namespace confines, and no other", () => {
    for (const family of [1, 2, 10, 16]) expect(run(X86_64_SYSCALLS.socket, family)).toBe(ALLOW);
    const EAFNOSUPPORT = 0x00050000 | 97;
    for (const family of [40, 17, 38, 31, 44, 0, 1 << 16]) {
      expect(run(X86_64_SYSCALLS.socket, family), `family ${family}`).toBe(EAFNOSUPPORT);
    }
  });

  it("refuses x32 calls and kills other architectures' calls", () => {
    expect(run(0x40000000 + 101)).toBe(EPERM);
    expect(run(0x40000000)).toBe(EPERM);
    expect(run(1, 0, 0x40000003)).toBe(0x80000000);
  });
});
