// `launch --executor slurm` against a real one-node Slurm (slurmctld, slurmd, munged from Debian's
// packages) that the test starts for itself: job arrays per record-wise stage, a single job for the
// global stage, afterok chaining, per-shard logs, and a union equal to a one-process run.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { present } from "../support/required.js";
import { type SlurmCluster, slurmUnavailable, startSlurm } from "../support/slurm-cluster.js";
import { toyCli, toyConfig } from "../support/toy-cli-kit.js";

const setup = (stages: string) =>
  toyConfig(
    `stages:\n${stages}launch:\n  slurm:\n    partition: debug\n    time: "00:10:00"\n    mem: 500M\n    global: {mem: 600M}\n    extra_args: ["--comment=codefeedback-test"]\n`,
  );

const sorted = (jsonl: string) => jsonl.trim().split("\n").sort();
const unavailable = slurmUnavailable();

describe.runIf(present("SLURM", unavailable))(
  `launch --executor slurm on a one-node Slurm${unavailable ? ` (skipped: ${unavailable})` : ""}`,
  () => {
    let cluster: SlurmCluster;
    beforeAll(async () => {
      cluster = await startSlurm();
    });
    afterAll(async () => {
      await cluster?.stop();
    });

    const slurm = (tool: string, args: string[]) =>
      execFileSync(tool, args, { env: cluster.env, encoding: "utf8" });

    async function finished(ids: string[]): Promise<void> {
      const deadline = Date.now() + 300_000;
      while (slurm("squeue", ["-h", "-j", ids.join(","), "-o", "%i %T"]).trim() !== "") {
        if (Date.now() > deadline) throw new Error(`jobs ${ids} still queued\n${cluster.logs()}`);
        await new Promise((r) => setTimeout(r, 1000));
      }
    }

    /** Every task of a job (an array's tasks each on a line) with its state and times. */
    function tasks(id: string): { state: string; start: number; end: number; raw: string }[] {
      return slurm("scontrol", ["show", "job", "-o", id])
        .trim()
        .split("\n")
        .map((raw) => ({
          raw,
          state: /JobState=(\S+)/.exec(raw)![1]!,
          start: Date.parse(/StartTime=(\S+)/.exec(raw)![1]!),
          end: Date.parse(/EndTime=(\S+)/.exec(raw)![1]!),
        }));
    }

    it("submits a job array of 3 per record-wise stage and one job for the global stage, chained with afterok", async () => {
      const stages = "  numbers: {count: 30}\n";
      const { dir, config } = setup(stages);
      const r = toyCli(["launch", "total", "--executor", "slurm", "--shards", "3", "--config", config], {
        env: cluster.env,
      });
      expect(r.code, r.stderr).toBe(0);
      const ids = r.stdout.trim().split(" ");
      expect(ids).toHaveLength(3);
      for (const id of ids) expect(id).toMatch(/^\d+$/);
      await finished(ids);

      const [numbers, expand, total] = ids.map((id) => tasks(id!));
      expect(numbers!.map((t) => t.state)).toEqual(["COMPLETED", "COMPLETED", "COMPLETED"]);
      expect(expand!.map((t) => t.state)).toEqual(["COMPLETED", "COMPLETED", "COMPLETED"]);
      expect(total!.map((t) => t.state)).toEqual(["COMPLETED"]);
      // afterok: no task of a stage starts before every task of the stage it reads has ended
      expect(Math.min(...expand!.map((t) => t.start))).toBeGreaterThanOrEqual(
        Math.max(...numbers!.map((t) => t.end)),
      );
      expect(total![0]!.start).toBeGreaterThanOrEqual(Math.max(...expand!.map((t) => t.end)));
      // the config's partition, time limit and extra arguments reached Slurm
      expect(numbers![0]!.raw).toContain("Partition=debug");
      expect(numbers![0]!.raw).toContain("TimeLimit=00:10:00");
      expect(numbers![0]!.raw).toContain("Comment=codefeedback-test");
      expect(numbers![0]!.raw).toContain("MinMemoryNode=500M");
      expect(total![0]!.raw).toContain("MinMemoryNode=600M");

      // the union of the shards is what one process makes
      const one = setup(stages);
      expect(toyCli(["run", "total", "--config", one.config]).code).toBe(0);
      for (const stage of ["expand", "total"]) {
        expect(sorted(toyCli(["cat", stage, "--config", config]).stdout)).toEqual(
          sorted(toyCli(["cat", stage, "--config", one.config]).stdout),
        );
      }

      // the scripts are kept, and each shard wrote its own log
      const launch = join(dir, "data", "launch");
      const [run] = readdirSync(launch);
      expect(run).toMatch(/^slurm-/);
      const kept = readdirSync(join(launch, run!)).sort();
      expect(kept).toEqual(["01-numbers.sbatch", "02-expand.sbatch", "03-total.sbatch", "jobs.json", "logs"]);
      expect(readFileSync(join(launch, run!, "02-expand.sbatch"), "utf8")).toContain("#SBATCH --array=0-2");
      const logs = readdirSync(join(launch, run!, "logs")).sort();
      const [n, e, t] = ids;
      expect(logs).toEqual(
        [0, 1, 2]
          .flatMap((k) => [`expand-${e}_${k}.log`, `numbers-${n}_${k}.log`])
          .concat(`total-${t}.log`)
          .sort(),
      );
      for (const k of [0, 1, 2]) {
        expect(readFileSync(join(launch, run!, "logs", `expand-${e}_${k}.log`), "utf8")).toContain(
          `expand shard ${k}/3: complete`,
        );
      }
      expect(readFileSync(join(launch, run!, "logs", `total-${t}.log`), "utf8")).toContain("total: complete");
    });

    it("a failing shard stops the chain: the stages after it are cancelled, not run on partial input", async () => {
      const { config } = setup("  numbers: {count: 30}\n  expand: {fail_every: 7}\n");
      // the jobs get the submitter's environment (sbatch --export=ALL), so the toy stage fails in them
      const r = toyCli(["launch", "total", "--executor", "slurm", "--shards", "3", "--config", config], {
        env: { ...cluster.env, TOY_FAILING: "1" },
      });
      expect(r.code, r.stderr).toBe(0);
      const ids = r.stdout.trim().split(" ");
      await finished(ids);
      expect(tasks(ids[1]!).some((t) => t.state === "FAILED")).toBe(true);
      expect(tasks(ids[2]!)[0]!.state).toBe("CANCELLED");
      expect(toyCli(["status", "--json", "--config", config], { env: cluster.env }).stdout).toMatch(
        /"stage": "total",\s*"state": "not started"/,
      );
    });
  },
);

describe("launch --executor slurm without Slurm", () => {
  it("names the package that provides sbatch (exit 2)", () => {
    const { config } = setup("  numbers: {count: 3}\n");
    const r = toyCli(["launch", "total", "--executor", "slurm", "--config", config], {
      env: { PATH: "/nonexistent" },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("sbatch");
    expect(r.stderr).toContain("slurm-client");
  });
});
