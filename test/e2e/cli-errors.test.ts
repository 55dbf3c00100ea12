// An error that reaches the top of `pnpm pipeline` and is no UserError is a bug: one line saying
// what failed and where, the stack in a log file (on the terminal only with --verbose), exit 70.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { tempDir } from "../support/temp-dir.js";
import { toyConfig } from "../support/toy-cli-kit.js";

const BUG_CLI = new URL("../support/bug-cli.ts", import.meta.url).pathname;

async function bug(stage: string, extra: string[] = []) {
  const { config } = toyConfig("stages:\n  numbers: {count: 3}\n");
  const logs = tempDir();
  const result = await runCli(["run", stage, "--config", config, ...extra], {
    entry: BUG_CLI,
    env: { TMPDIR: logs },
  });
  const files = readdirSync(logs).filter((f) => f.startsWith("codefeedback-error-"));
  return { ...result, logs: files.map((f) => join(logs, f)) };
}

describe("an error that is a bug", () => {
  it.each([
    ["broken", "TypeError: a stand-in bug: cannot read properties of undefined"],
    ["late", "RangeError: a stand-in bug in a timer"],
  ])("in %s: one line with what and where, the stack in a log file, exit 70", async (stage, what) => {
    const r = await bug(stage);
    expect(r.code, r.stderr).toBe(70);
    const line = r.stderr.split("\n").find((l) => l.startsWith("error"))!;
    expect(line).toContain(`error (a bug, please report it): ${what} at `);
    expect(line).toMatch(/bug-cli\.ts:\d+/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.logs).toHaveLength(1);
    expect(line).toContain(`the stack is in ${r.logs[0]}`);
    const log = readFileSync(r.logs[0]!, "utf8");
    expect(log).toContain(what);
    expect(log).toMatch(/\n\s+at .*bug-cli\.ts:\d+/);
  });

  it("shows the stack on the terminal with --verbose", async () => {
    const r = await bug("broken", ["--verbose"]);
    expect(r.code).toBe(70);
    expect(r.stderr).toMatch(/\n\s+at .*bug-cli\.ts:\d+/);
  });

  it("a usage error stays a one-line message with its own code", async () => {
    const r = await bug("nonexistent");
    expect(r.code).toBe(2);
    expect(r.stderr).not.toContain("a bug");
    expect(r.logs).toEqual([]);
  });
});
