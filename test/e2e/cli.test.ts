import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { TOY_CLI, toyCli, toyConfig } from "../support/toy-cli-kit.js";

describe("cli", () => {
  it("run, status --json, cat, cat --rejects, reset", () => {
    const { config } = toyConfig();
    const run = toyCli(["run", "expand", "--config", config]);
    expect(run.stderr).toContain("expand: complete: 9 in, 9 out, 3 rejected");
    expect(run.code).toBe(0);

    const status = JSON.parse(toyCli(["status", "--json", "--config", config]).stdout);
    expect(status.map((s: { stage: string; state: string }) => [s.stage, s.state])).toEqual([
      ["numbers", "complete"],
      ["expand", "complete"],
      ["total", "not started"],
    ]);
    expect(status[1].counts).toEqual({ in: 9, out: 9, rejected: 3, failed: 0 });

    const lines = toyCli(["cat", "expand", "--config", config]).stdout.trim().split("\n");
    expect(lines.map((l) => JSON.parse(l).id).sort()).toEqual(
      ["n:1/0", "n:2/0", "n:2/1", "n:4/0", "n:5/0", "n:5/1", "n:7/0", "n:8/0", "n:8/1"].sort(),
    );
    const rejects = toyCli(["cat", "expand", "--rejects", "--config", config]).stdout.trim().split("\n");
    expect(rejects.map((l) => JSON.parse(l).reason)).toEqual(["no-copies", "no-copies", "no-copies"]);

    const reset = toyCli(["reset", "numbers", "--config", config]);
    expect(reset.stderr).toContain("downstream: expand, total marked stale");
    const table = toyCli(["status", "--config", config]).stdout;
    expect(table).toMatch(/numbers\s+not started/);
    expect(table).toMatch(/expand\s+stale \(upstream numbers was reset\)/);
  });

  it("--set overrides a key; --limit applies to sources", () => {
    const { config } = toyConfig();
    expect(
      toyCli(["run", "numbers", "--config", config, "--set", "stages.numbers.count=4"]).stderr,
    ).toContain("numbers: complete: 4 in, 4 out");
    expect(toyCli(["run", "numbers", "--config", config, "--limit", "2"]).stderr).toContain(
      "numbers: complete: 2 in, 2 out",
    );
  });

  it("stages lists every stage with its upstream", () => {
    const out = toyCli(["stages"]).stdout;
    expect(out).toMatch(/expand\s+record\s+numbers\s+flat-map with rejects/);
    expect(out).toMatch(/total\s+global\s+expand/);
  });

  it("--help works on every command", () => {
    for (const command of ["run", "status", "stages", "cat", "reset"]) {
      const r = toyCli([command, "--help"]);
      expect(r.code, command).toBe(0);
      expect(r.stdout, command).toContain(`pnpm pipeline ${command}`);
    }
  });

  it("bad config keys exit 2 naming file, each key and its line, the top level's and a stage's at once", () => {
    const { config } = toyConfig();
    writeFileSync(config, "data_dir: x\ndata_dri: y\nstages:\n  expand:\n    copiez: 1\n");
    const r = toyCli(["status", "--config", config]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `invalid configuration in ${config}:\n  data_dri (line 2): unknown key\n  stages.expand.copiez (line 5): unknown key\n`,
    );
  });

  it("an unknown stage is a usage error", () => {
    const r = toyCli(["run", "nope", "--config", toyConfig().config]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/Invalid values|Choices/);
  });
});

describe("cli signals", () => {
  it("SIGINT lets in-flight records finish, saves, exits 130 saying how to resume; the rerun completes", async () => {
    const { spawn } = await import("node:child_process");
    const { existsSync, readdirSync, statSync } = await import("node:fs");
    const { config, data } = toyConfig(
      "stages:\n  numbers: {count: 3000}\n  expand: {delay_ms: 12, concurrency: 4}\n",
    );
    const child = spawn(process.execPath, ["--import", "tsx", TOY_CLI, "run", "expand", "--config", config], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    // interrupted once a record is committed (a part file has a line), however slow the machine
    const parts = join(data, "expand", "parts");
    const poll = setInterval(() => {
      if (existsSync(parts) && readdirSync(parts).some((f) => statSync(join(parts, f)).size > 0)) {
        clearInterval(poll);
        child.kill("SIGINT");
      }
    }, 10);
    // "close": the streams are read to their end, not only the process gone
    const code = await new Promise<number | null>((resolve) => child.on("close", (c) => resolve(c)));
    clearInterval(poll);
    expect(code).toBe(130);
    expect(stderr).toContain("SIGINT: finishing the records in flight and saving");
    expect(stderr).toMatch(
      /interrupted: expand saved \d+ records so far\. Run the same command again to resume/,
    );
    const status = JSON.parse(toyCli(["status", "--json", "--config", config]).stdout);
    expect(status[1].state).toBe("partial");
    const saved = status[1].counts.in as number;
    expect(saved).toBeGreaterThan(0);
    const rerun = toyCli(["run", "expand", "--config", config]);
    expect(rerun.code).toBe(0);
    const done = JSON.parse(toyCli(["status", "--json", "--config", config]).stdout);
    expect(done[1].counts).toEqual({ in: 3000, out: 3000, rejected: 1000, failed: 0 });
  });
});
