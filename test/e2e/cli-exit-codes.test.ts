// Exit codes a script can act on: 2 is a usage or configuration error (fix the command), 4 a service
// the run needs could not be reached (rerun later, nothing to fix in the command).
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

  it("a usage error stays 2", async () => {
    const result = await pipeline(["run", "download", "--config", "configs/sample.yaml", "--limit", "0"]);
    expect(result.code).toBe(2);
  });
});
