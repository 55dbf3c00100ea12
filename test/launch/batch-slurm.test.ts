// `launch --executor slurm` with the scorer writing `files` batches, on a one-node Slurm the test
// starts: each batch file is answered by a job of its own (the stand-in for vllm run-batch), the
// stage's next round waits for it with afterok, the stage ends with the online run's records, and
// the stage after it (pack) runs once, on the complete stage.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UserError } from "../../pipeline/errors.js";
import { launchSlurm } from "../../pipeline/launch/slurm.js";
import { StageStore } from "../../pipeline/store/stage-store.js";
import { cli, outcomeOf, useReferenceRun } from "../e2e/kit.js";
import { present } from "../support/required.js";
import { type SlurmCluster, slurmUnavailable, startSlurm } from "../support/slurm-cluster.js";
import { tempDir } from "../support/temp-dir.js";

const unavailable = slurmUnavailable();

describe("launch --executor slurm with batch files, sharded", () => {
  it("is refused before anything is written: a round gathers the whole stage", async () => {
    const dir = tempDir("cf-batch-slurm-shards-");
    const launched = launchSlurm([{ stage: "filter", kind: "record", shards: 3, after: [] }], {
      invocation: { program: ["pipeline"], cwd: dir, options: [] },
      config: {} as never,
      dir: join(dir, "launch"),
      out: process.stderr,
      relaunch: ["launch", "filter", "--batch-round"],
    });
    await expect(launched).rejects.toThrow(UserError);
    await expect(launched).rejects.toThrow("--shards 1");
    expect(existsSync(join(dir, "launch"))).toBe(false);
  });
});

describe.runIf(present("SLURM", unavailable))(
  `launch --executor slurm with batch files${unavailable ? ` (skipped: ${unavailable})` : ""}`,
  () => {
    const ref = useReferenceRun("cf-batch-slurm-ref-");
    let cluster: SlurmCluster;
    beforeAll(async () => {
      cluster = await startSlurm();
    });
    afterAll(async () => {
      await cluster?.stop();
    });

    const job = (id: string) => {
      const raw = execFileSync("scontrol", ["show", "job", "-o", id], { env: cluster.env, encoding: "utf8" });
      return {
        raw,
        state: /JobState=(\S+)/.exec(raw)![1]!,
        start: Date.parse(/StartTime=(\S+)/.exec(raw)![1]!),
        end: Date.parse(/EndTime=(\S+)/.exec(raw)![1]!),
      };
    };

    // the stage's manifest is complete a moment before its job's process exits: wait for Slurm to say so
    const ended = async (id: string) => {
      const deadline = Date.now() + 120_000;
      let seen = job(id);
      while (/^(PENDING|RUNNING|COMPLETING|CONFIGURING)$/.test(seen.state) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 500));
        seen = job(id);
      }
      return seen;
    };

    it("answers each round's file in a job of its own, runs the next round after it, and the next stage after the last", async () => {
      const dir = tempDir("cf-batch-slurm-");
      const env = { ...ref.env(), SLURM_CONF: cluster.env.SLURM_CONF };
      const upstream = await cli(dir, ["run", "dedup"], env);
      expect(upstream.code, upstream.stderr).toBe(0);
      ref.server.reset();
      const command = `${process.execPath} --import tsx test/support/run-batch.ts -i {input} -o {output} --model {model}`;
      const sets = [
        "--set",
        `llm.scorer.batch={provider: files, command: '${command}'}`,
        "--set",
        "launch.slurm={partition: debug, time: '00:10:00', batch: {time: '00:05:00'}}",
      ];
      const launched = await cli(dir, ["launch", "pack", "--executor", "slurm", ...sets], env);
      expect(launched.code, launched.stderr).toBe(0);

      const pack = new StageStore(dir, "pack");
      const launches = join(dir, "launch");
      const deadline = Date.now() + 300_000;
      while (pack.manifest()?.state !== "complete") {
        const logs = existsSync(launches)
          ? readdirSync(launches).flatMap((l) =>
              existsSync(join(launches, l, "logs"))
                ? readdirSync(join(launches, l, "logs")).map((f) =>
                    readFileSync(join(launches, l, "logs", f), "utf8").slice(-800),
                  )
                : [],
            )
          : [];
        if (Date.now() > deadline)
          throw new Error(`pack not complete\n${logs.join("\n")}\n${cluster.logs()}`);
        await new Promise((r) => setTimeout(r, 1000));
      }
      expect(await outcomeOf(dir)).toEqual({ kept: ref.reference.kept, rejected: ref.reference.rejected });
      expect([...ref.server.answered.values()].filter((n) => n > 1)).toEqual([]);
      expect(ref.server.count).toBe(ref.reference.requests);

      // the first launch ran round 1; each round's job that wrote files launched the next: a batch job
      // per file with launch.slurm.batch's resources, and the stage's job after it
      const rounds = readdirSync(launches)
        .sort()
        .map((l) => JSON.parse(readFileSync(join(launches, l, "jobs.json"), "utf8")) as SlurmJobs);
      const chained = rounds.filter((jobs) => jobs.some((j) => j.stage === "filter (batch)"));
      expect(chained.length).toBe(2);
      // the pack jobs of the rounds that wrote files were cancelled; the last launch's ran after its filter
      for (const jobs of rounds.slice(0, -1)) {
        expect(job(jobs.find((j) => j.stage === "pack")!.jobId).state).toBe("CANCELLED");
      }
      const last = rounds.at(-1)!;
      const packed = await ended(last.find((j) => j.stage === "pack")!.jobId);
      expect(packed.state).toBe("COMPLETED");
      expect(packed.start).toBeGreaterThanOrEqual(job(last.find((j) => j.stage === "filter")!.jobId).end);
      for (const jobs of chained) {
        const batches = jobs.filter((j) => j.stage === "filter (batch)");
        const stage = jobs.find((j) => j.stage === "filter")!;
        expect(stage.dependsOn).toEqual(batches.map((b) => b.jobId));
        expect(readFileSync(batches[0]!.script, "utf8")).toContain("#SBATCH --time=00:05:00");
        for (const b of batches) {
          const answered = job(b.jobId);
          expect(answered.state).toBe("COMPLETED");
          expect(answered.raw).toContain("Partition=debug");
          expect(job(stage.jobId).start).toBeGreaterThanOrEqual(answered.end);
        }
      }
    });
  },
);

type SlurmJobs = { stage: string; script: string; jobId: string; dependsOn: string[] }[];
