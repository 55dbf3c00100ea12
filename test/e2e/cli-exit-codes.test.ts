// Exit codes a script can act on: 2 is a usage or configuration error (fix the command), 3 a server
// that never answered (fix its address or start it), 4 a service the run needs could not be reached
// (rerun later, nothing to fix in the command).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { freePort } from "../support/ports.js";
import { tempDir } from "../support/temp-dir.js";

const pipeline = (args: string[]) => runCli(args, { env: { HF_ENDPOINT: "" } });

describe("exit codes", () => {
  it("an unreachable hub exits with 4, not the usage code 2", async () => {
    const port = await freePort();
    const result = await pipeline([
      "run",
      "download",
      "--config",
      "configs/sample.yaml",
      "--data-dir",
      join(tempDir(), "data"),
      "--set",
      `hub.endpoint=http://127.0.0.1:${port}`,
      "--set",
      "hub.retries=0",
    ]);
    expect(result.stderr).toMatch(/cannot reach the hub at http:\/\/127\.0\.0\.1:\d+/);
    expect(result.code).toBe(4);
  });

  it("a sandbox server that never answers stops `sandbox run` with 3 and the fix, printing no result", async () => {
    const dir = tempDir();
    const port = await freePort();
    writeFileSync(join(dir, "c.yaml"), `sandbox:\n  url: http://127.0.0.1:${port}\n  probe_s: 0.3\n`);
    writeFileSync(join(dir, "a.py"), "print(1)\n");
    const args = ["--language", "python", "--file", join(dir, "a.py"), "--config", join(dir, "c.yaml")];
    const result = await pipeline(["sandbox", "run", ...args]);
    expect(result.code, result.stderr).toBe(3);
    expect(result.stderr).toContain(
      `error: no answer from the sandbox server at http://127.0.0.1:${port}/run_code`,
    );
    expect(result.stderr).toContain("ECONNREFUSED");
    expect(result.stderr).toContain("Check sandbox.url");
    expect(result.stdout).toBe("");
  });

  it("a usage error stays 2", async () => {
    const result = await pipeline(["run", "download", "--config", "configs/sample.yaml", "--limit", "0"]);
    expect(result.code).toBe(2);
  });
});
