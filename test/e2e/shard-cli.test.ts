// `run --shard` on the command line: a bad spec is a usage error naming the flag, and without the
// flag the shard comes from a Slurm job array or a Kubernetes Indexed Job's environment.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { UserError } from "../../pipeline/errors.js";
import { parseShardSpec, shardFromEnvironment, shardOfId } from "../../pipeline/runner/shard.js";
import { toyCli, toyConfig } from "../support/toy-cli-kit.js";

const SCHEDULER_ENV = [
  "SLURM_ARRAY_TASK_ID",
  "SLURM_ARRAY_TASK_COUNT",
  "SLURM_ARRAY_TASK_MIN",
  "JOB_COMPLETION_INDEX",
  "CODEFEEDBACK_SHARDS",
];

/** The toy CLI without this process's scheduler variables, `env` set over them. */
function cli(args: string[], env: Record<string, string> = {}) {
  return toyCli(args, {
    env: { ...Object.fromEntries(SCHEDULER_ENV.map((name) => [name, undefined])), ...env },
  });
}

describe("--shard", () => {
  it("parses K/N and refuses anything else, naming the flag", () => {
    expect(parseShardSpec("0/1")).toEqual({ index: 0, count: 1 });
    expect(parseShardSpec(" 3 / 4 ")).toEqual({ index: 3, count: 4 });
    for (const bad of ["0/0", "5/4", "4/4", "x", "1", "-1/4", "1/4/2", "1.5/4", ""]) {
      expect(() => parseShardSpec(bad), bad).toThrow(UserError);
      expect(() => parseShardSpec(bad), bad).toThrow(/^--shard /);
    }
  });

  it("exits 2 with a message naming the flag for 0/0, 5/4 and x", () => {
    const { config, data } = toyConfig();
    for (const [spec, says] of [
      ["0/0", "the number of shards must be at least 1"],
      ["5/4", "there is no shard 5 of 4, shards are numbered 0 to 3"],
      ["x", '"x" is not a shard'],
    ] as const) {
      const run = cli(["run", "numbers", "--shard", spec, "--config", config]);
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toContain(`--shard ${spec === "x" ? "" : spec}`);
      expect(run.stderr).toContain(says);
      expect(run.stderr).not.toMatch(/\n\s+at /);
    }
    expect(existsSync(data)).toBe(false);
  });

  it("reads the shard of a Slurm job array, whatever its first index", () => {
    expect(shardFromEnvironment({ SLURM_ARRAY_TASK_ID: "2", SLURM_ARRAY_TASK_COUNT: "3" })?.spec).toEqual({
      index: 2,
      count: 3,
    });
    const fromOne = { SLURM_ARRAY_TASK_ID: "4", SLURM_ARRAY_TASK_COUNT: "4", SLURM_ARRAY_TASK_MIN: "1" };
    expect(shardFromEnvironment(fromOne)?.spec).toEqual({ index: 3, count: 4 });
    expect(() => shardFromEnvironment({ SLURM_ARRAY_TASK_ID: "1" })).toThrow(/SLURM_ARRAY_TASK_COUNT is not/);
    expect(shardFromEnvironment({})).toBeUndefined();

    const { config, data } = toyConfig();
    const run = cli(["run", "numbers", "--config", config], fromOne);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain("numbers shard 3/4: complete");
    expect(existsSync(join(data, "numbers", "shards", "3-of-4", "manifest.json"))).toBe(true);
    // --shard wins over the environment
    expect(cli(["run", "numbers", "--shard", "0/4", "--config", config], fromOne).stderr).toContain(
      "numbers shard 0/4: complete",
    );
  });

  it("reads a Kubernetes Indexed Job's index, with N from CODEFEEDBACK_SHARDS or the config", () => {
    expect(shardFromEnvironment({ JOB_COMPLETION_INDEX: "1", CODEFEEDBACK_SHARDS: "2" })?.spec).toEqual({
      index: 1,
      count: 2,
    });
    expect(shardFromEnvironment({ JOB_COMPLETION_INDEX: "1" }, 3)?.spec).toEqual({ index: 1, count: 3 });
    expect(() => shardFromEnvironment({ JOB_COMPLETION_INDEX: "1" })).toThrow(/set CODEFEEDBACK_SHARDS/);
    expect(() => shardFromEnvironment({ JOB_COMPLETION_INDEX: "2", CODEFEEDBACK_SHARDS: "2" })).toThrow(
      /JOB_COMPLETION_INDEX=2 \(of 2\) 2\/2: there is no shard 2 of 2/,
    );
    expect(() => shardFromEnvironment({ JOB_COMPLETION_INDEX: "one" })).toThrow(/not a whole number/);

    const { config } = toyConfig();
    const missing = cli(["run", "numbers", "--config", config], { JOB_COMPLETION_INDEX: "1" });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(
      "JOB_COMPLETION_INDEX is set but the number of shards is not: set CODEFEEDBACK_SHARDS",
    );
    const other = toyConfig().config;
    const launch = join(dirname(other), "launch.yaml");
    writeFileSync(launch, `${readFileSync(other, "utf8")}launch: {shards: 3}\n`);
    const fromConfig = cli(["run", "numbers", "--config", launch], { JOB_COMPLETION_INDEX: "2" });
    expect(fromConfig.code, fromConfig.stderr).toBe(0);
    expect(fromConfig.stderr).toContain("numbers shard 2/3: complete");
    const run = cli(["run", "numbers", "--config", config], {
      JOB_COMPLETION_INDEX: "1",
      CODEFEEDBACK_SHARDS: "2",
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain("numbers shard 1/2: complete");
  });

  it("sends a record to the same shard every time, and spreads records evenly", () => {
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < 4000; i++) {
      const shard = shardOfId(`magicoder:${String(i).padStart(6, "0")}`, 4);
      expect(shardOfId(`magicoder:${String(i).padStart(6, "0")}`, 4)).toBe(shard);
      counts[shard]!++;
    }
    for (const n of counts) expect(Math.abs(n - 1000)).toBeLessThan(120);
    // a fixed point: the function is part of the on-disk format, so it must never drift
    // (48 bits of SHA-1 of the id, mod N): a shard written by one version is read by the next
    expect([0, 1, 2, 3, 4, 5].map((i) => shardOfId(`n:${i}`, 7))).toEqual([1, 6, 0, 3, 4, 6]);
    expect(shardOfId("anything", 1)).toBe(0);
  });
});
