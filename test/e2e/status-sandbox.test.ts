// `status` shows the programs each stage ran in the sandbox and the sandbox's busy time: a column of
// the table, a line of `--stage X`, a key of `--json`, per shard and summed, and per /run_code server.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { expectedPrograms, PROGRAM_S, timedRunCodeServer } from "../support/sandbox-toy.js";
import { tempDir } from "../support/temp-dir.js";

const CLI = new URL("../support/sandbox-toy-cli.ts", import.meta.url).pathname;

/** The toy stages' CLI, as a child that does not block this process: the /run_code servers live here. */
const cli = (args: string[]) => runCli(args, { entry: CLI });

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

describe("status shows the sandbox's programs", () => {
  it("in the table, --stage and --json, per shard and summed, and per server", async () => {
    const servers = [await timedRunCodeServer(1), await timedRunCodeServer(1)];
    for (const s of servers) closers.push(s.close);
    const dir = tempDir();
    const config = join(dir, "c.yaml");
    writeFileSync(
      config,
      `data_dir: ${join(dir, "data")}\nsandbox: {url: [${servers.map((s) => s.url).join(", ")}], workers: 2}\nstages:\n  numbers: {count: 30}\n`,
    );
    const programs = expectedPrograms(30);
    const busy = `${((programs * PROGRAM_S * 1000) / 1000).toFixed(1)}`;
    expect((await cli(["run", "numbers", "--config", config])).code).toBe(0);
    for (const shard of ["0/2", "1/2"]) {
      const run = await cli(["run", "programs", "--only", "--shard", shard, "--config", config]);
      expect(run.code, run.stderr).toBe(0);
      // the end of the run says what the shard ran
      expect(run.stderr).toMatch(
        new RegExp(`programs shard ${shard}: sandbox: \\d+ programs, [\\d.]+ s busy`),
      );
    }

    const table = await cli(["status", "--config", config]);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/cost \$\s+programs\s+busy\s+elapsed/);
    expect(table.stdout).toMatch(
      new RegExp(
        `^programs\\s+complete\\s+30\\s+30\\s+0\\s+0\\s+0\\s+0\\s+0\\s+${programs}\\s+${busy}s`,
        "m",
      ),
    );
    // in, out, rejected, failed, llm req, cached, tokens, then the shard's programs and busy time
    expect(table.stdout).toMatch(/^ {2}shard 0\/2\s+done(\s+\d+){8}\s+[\d.]+s/m);
    // each server's programs beside its requests
    for (const s of servers)
      expect(table.stdout).toMatch(
        new RegExp(`^programs\\s+${s.url}/run_code\\s+\\d+.*\\s+\\d+\\s+[\\d.]+ s$`, "m"),
      );

    const detail = await cli(["status", "--stage", "programs", "--config", config]);
    expect(detail.stdout).toContain(`sandbox: ${programs} programs, ${busy} s busy`);

    const json = JSON.parse((await cli(["status", "--json", "--config", config])).stdout);
    const row = json.find((r: { stage: string }) => r.stage === "programs");
    expect(row.sandbox).toMatchObject({ runs: programs, busyMs: programs * PROGRAM_S * 1000 });
    const shards = row.shards.map((s: { sandbox: { runs: number } }) => s.sandbox.runs);
    expect(shards[0] + shards[1]).toBe(programs);
    expect(json.find((r: { stage: string }) => r.stage === "numbers").sandbox).toBeNull();
  });
});
