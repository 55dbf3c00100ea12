// `launch --executor local` over the toy stages, through the real CLI: N shard processes per
// record-wise stage, the union as a one-process run makes it, failures with the command that reruns
// the shard, and Ctrl-C stopping every child.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { TOY_CLI, toyCli, toyConfig } from "../support/toy-cli-kit.js";

const setup = (stages = "  numbers: {count: 30}\n") => toyConfig(`stages:\n${stages}`);

const sorted = (jsonl: string) => jsonl.trim().split("\n").sort();

/** What a one-process `run` of the same stages makes, to compare a launch's union with. */
function oneProcess(stages: string, stage: string) {
  const { config } = setup(stages);
  expect(toyCli(["run", stage, "--config", config]).code).toBe(0);
  return sorted(toyCli(["cat", stage, "--config", config]).stdout);
}

function logsOf(dir: string): string[] {
  const launch = join(dir, "data", "launch");
  return readdirSync(launch).flatMap((run) =>
    existsSync(join(launch, run, "logs"))
      ? readdirSync(join(launch, run, "logs")).map((f) => join(launch, run, "logs", f))
      : [],
  );
}

describe("launch --executor local", () => {
  it("runs each record-wise stage as N shard processes, then the global stage, and the union is a one-process run's", () => {
    const { dir, config } = setup();
    const r = toyCli(["launch", "total", "--shards", "3", "--config", config]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("launch (local): numbers x3, expand x3, total");
    // stage after stage: expand starts only once numbers is done
    expect(r.stderr.indexOf("launch: numbers: done")).toBeLessThan(
      r.stderr.indexOf("launch: expand: 3 shard processes"),
    );
    for (const k of [0, 1, 2]) expect(r.stderr).toContain(`[expand ${k}/3]`);

    expect(sorted(toyCli(["cat", "expand", "--config", config]).stdout)).toEqual(
      oneProcess("  numbers: {count: 30}\n", "expand"),
    );
    expect(JSON.parse(toyCli(["cat", "total", "--config", config]).stdout)).toEqual({
      id: "total",
      sum: 455,
      n: 30,
    });
    const logs = logsOf(dir)
      .map((f) => f.split("/").at(-1))
      .sort();
    expect(logs).toEqual(
      [
        "expand-0.log",
        "expand-1.log",
        "expand-2.log",
        "numbers-0.log",
        "numbers-1.log",
        "numbers-2.log",
        "total.log",
      ].sort(),
    );
    const status = JSON.parse(toyCli(["status", "--json", "--config", config]).stdout);
    expect(status.map((s: { state: string }) => s.state)).toEqual(["complete", "complete", "complete"]);

    // a second launch finds everything complete and starts only the named stage, which has nothing to do
    const again = toyCli(["launch", "total", "--shards", "3", "--config", config]);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain("launch (local): total\n");
  });

  it("a failing shard fails the launch, names the command that reruns it, and starts nothing downstream", () => {
    const stages = "  numbers: {count: 30}\n  expand: {fail_every: 7}\n";
    const { config } = setup(stages);
    const failing = { ...process.env, TOY_FAILING: "1" };
    const r = toyCli(["launch", "total", "--shards", "3", "--config", config], { env: failing });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/process\(es\) failed/);
    expect(r.stderr).toContain("Not started: total");
    const reruns = [...r.stderr.matchAll(/rerun it alone: (.*)$/gm)].map((m) => m[1]!);
    expect(reruns.length).toBeGreaterThan(0);
    for (const rerun of reruns) expect(rerun).toMatch(/ run expand --only --shard [0-2]\/3 --config /);
    expect(toyCli(["status", "--json", "--config", config]).stdout).toContain('"not started"');

    // the printed command reruns that shard alone; then the launch goes on from where it stopped
    const healthy = { ...process.env };
    delete healthy.TOY_FAILING;
    const rerun = spawnSync("bash", ["-c", reruns[0]!], { encoding: "utf8", env: healthy });
    expect(rerun.status, rerun.stderr).toBe(0);
    const resumed = toyCli(["launch", "total", "--shards", "3", "--config", config], { env: healthy });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).not.toContain("launch: numbers:");
    expect(sorted(toyCli(["cat", "total", "--config", config]).stdout)).toEqual(oneProcess(stages, "total"));
  });

  it("Ctrl-C stops every shard process (each saves what it finished) and exits 130", async () => {
    const { dir, config } = setup("  numbers: {count: 40}\n  expand: {delay_ms: 3000, concurrency: 1}\n");
    const child = spawn(
      process.execPath,
      ["--import", "tsx", TOY_CLI, "launch", "expand", "--shards", "2", "--config", config],
      {
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stderr = "";
    child.stderr.on("data", (b) => {
      stderr += b;
    });
    // "close": the streams are read to their end, not only the process gone
    const exited = new Promise<number | null>((done) => child.on("close", (code) => done(code)));
    const deadline = Date.now() + 600_000;
    // wait until both expand shards have committed a record, so they are surely running
    while (!/\[expand 0\/2\] .*records/.test(stderr) || !/\[expand 1\/2\] .*records/.test(stderr)) {
      if (Date.now() > deadline) throw new Error(`expand never started:\n${stderr}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    child.kill("SIGINT");
    expect(await exited).toBe(130);
    expect(stderr).toContain("SIGINT: stopping the shards");
    expect(stderr).toContain("run the same launch command again to go on");
    // no process of this launch is left (they ran with this config in their command line)
    const left = readdirSync("/proc")
      .filter((p) => /^\d+$/.test(p))
      .filter((p) => {
        try {
          return readFileSync(`/proc/${p}/cmdline`, "utf8").includes(config);
        } catch {
          return false;
        }
      });
    expect(left).toEqual([]);
    expect(logsOf(dir).some((f) => readFileSync(f, "utf8").includes("SIGINT"))).toBe(true);
  });

  it("refuses a shard count that is not a whole number of 1 or more, naming the flag (exit 2)", () => {
    const { config } = setup();
    for (const bad of ["0", "-2", "1.5"]) {
      const r = toyCli(["launch", "total", "--shards", bad, "--config", config]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("--shards");
    }
  });
});
