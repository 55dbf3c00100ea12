// `pipeline sandbox languages|run` through yargs, in-process, and `isolation: none` for trusted code.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import yargs from "yargs";
import { readSandboxConfig, sandboxCommand } from "../../pipeline/cli/sandbox.js";
import { UserError } from "../../pipeline/errors.js";
import { EmbeddedSandbox, type RunCodeResponse } from "../../pipeline/sandbox/index.js";
import { probeIsolationMode, testConfig } from "../sandbox/helpers.js";
import { tempDir } from "../support/temp-dir.js";

const mode = await probeIsolationMode();

async function cli(args: string[]): Promise<string> {
  let out = "";
  const write = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
    out += String(chunk);
    return true;
  });
  try {
    await yargs(args).command(sandboxCommand).strict().exitProcess(false).parseAsync();
  } finally {
    write.mockRestore();
  }
  return out;
}

describe("sandbox CLI", () => {
  let dir: string;
  beforeAll(() => {
    dir = tempDir("sandbox-cli-test-");
    writeFileSync(join(dir, "main.py"), "import sys\nprint(sys.stdin.read().upper())");
    writeFileSync(join(dir, "in.txt"), "shout");
    writeFileSync(
      join(dir, "config.yaml"),
      "data_dir: x\nsandbox:\n  run_timeout_s: 4\n  limits:\n    processes: 32\n",
    );
    writeFileSync(join(dir, "bad.yaml"), "sandbox:\n  isolation: docker\n");
  });
  afterEach(() => {
    process.exitCode = undefined;
  });

  it("reads the sandbox section of a YAML config", () => {
    const config = readSandboxConfig(join(dir, "config.yaml"));
    expect(config.run_timeout_s).toBe(4);
    expect(config.limits.processes).toBe(32);
    expect(readSandboxConfig(undefined).run_timeout_s).toBe(10);
  });

  it("explains a bad config", () => {
    expect(() => readSandboxConfig(join(dir, "bad.yaml"))).toThrow(UserError);
    expect(() => readSandboxConfig(join(dir, "bad.yaml"))).toThrow(/sandbox\.isolation/);
    expect(() => readSandboxConfig(join(dir, "missing.yaml"))).toThrow(/cannot read config/);
  });

  it("lists languages as JSON with versions and isolation", async () => {
    const out = JSON.parse(await cli(["sandbox", "languages", "--json"])) as {
      isolation: string;
      languages: { id: string; available: boolean; version: string | null }[];
    };
    const python = out.languages.find((l) => l.id === "python");
    expect(python?.available).toBe(true);
    expect(python?.version).toMatch(/^Python 3\./);
    expect(out.isolation).toMatch(/^bwrap|^unavailable/);
  });

  it.skipIf(mode === null)("runs a file with stdin and prints the result JSON", async () => {
    const out = await cli([
      "sandbox",
      "run",
      "--language",
      "python",
      "--file",
      join(dir, "main.py"),
      "--stdin",
      join(dir, "in.txt"),
      "--run-timeout",
      "5",
      "--config",
      join(dir, "config.yaml"),
    ]);
    const response = JSON.parse(out) as RunCodeResponse;
    expect(response.status).toBe("Success");
    expect(response.run_result?.stdout).toBe("SHOUT\n");
    expect(process.exitCode).toBe(0);
  });

  it("exits non-zero when the source file is missing", async () => {
    await expect(cli(["sandbox", "run", "-l", "python", "-f", join(dir, "nope.py")])).rejects.toThrow(
      /cannot read source file/,
    );
  });
});

describe("isolation: none", () => {
  it("runs trusted code on the host with the same result shape, and warns", async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.message);
    process.on("warning", onWarning);
    process.env.CODEFEEDBACK_CLI_TEST_SECRET = "x";
    const sandbox = new EmbeddedSandbox(testConfig({ isolation: "none" }));
    try {
      const response = await sandbox.run({
        language: "bash",
        code: 'cat data.txt; env | grep -c "^CODEFEEDBACK_CLI_TEST_SECRET=" || true',
        files: { "data.txt": Buffer.from("file\n").toString("base64") },
      });
      expect(response.status).toBe("Success");
      // files land in the work dir, and the host environment stays out
      expect(response.run_result?.stdout).toBe("file\n0\n");
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.join("\n")).toContain("isolation is 'none'");
    } finally {
      process.off("warning", onWarning);
      delete process.env.CODEFEEDBACK_CLI_TEST_SECRET;
      await sandbox.close();
    }
  });
});
