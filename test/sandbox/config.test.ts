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
import { sandboxSeccompFilter } from "../../pipeline/sandbox/seccomp.js";

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
    expect((remote as HttpSandboxClient).endpoint).toBe("http://127.0.0.1:1/run_code");
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

describe.skipIf(process.arch !== "x64")("seccomp filter", () => {
  it("is whole 8-byte instructions ending in return statements", () => {
    const filter = sandboxSeccompFilter()!;
    expect(filter.length % 8).toBe(0);
    const lastCode = filter.readUInt16LE(filter.length - 8);
    expect(lastCode).toBe(0x06);
    // every jump lands inside the program
    for (let i = 0; i < filter.length / 8; i++) {
      const code = filter.readUInt16LE(i * 8);
      if ((code & 0x07) === 0x05) {
        expect(i + 1 + filter.readUInt8(i * 8 + 2)).toBeLessThan(filter.length / 8);
        expect(i + 1 + filter.readUInt8(i * 8 + 3)).toBeLessThan(filter.length / 8);
      }
    }
  });
});
