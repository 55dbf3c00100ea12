// The Slurm batch script, run as a shell would run it: every word reaches the pipeline intact (spaces,
// quotes), the shard comes from the array task id, and a one-shard stage is neither an array nor sharded.
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { slurmLaunchSchema } from "../../pipeline/config/launch.js";
import { pipelineInvocation } from "../../pipeline/launch/invocation.js";
import type { LaunchStep } from "../../pipeline/launch/plan.js";
import { slurmScript } from "../../pipeline/launch/slurm.js";
import { tempDir } from "../support/temp-dir.js";

const awkward = "/tmp/a dir/it's.yaml";
const invocation = pipelineInvocation(
  { config: awkward, sets: ["stages.filter.note=two words"], limit: 7, command: ["printf", "%s\\n"] },
  "/",
);
const config = slurmLaunchSchema.parse({ setup: ["export FROM_SETUP=1"] });

/** Runs the script with bash (the #SBATCH lines are comments) and returns the words it printed. */
function wordsOf(script: string, taskId?: string): string[] {
  const file = join(tempDir(), "job.sbatch");
  writeFileSync(file, script);
  const env = { ...process.env };
  delete env.SLURM_ARRAY_TASK_ID;
  if (taskId) env.SLURM_ARRAY_TASK_ID = taskId;
  const r = spawnSync("bash", [file], { encoding: "utf8", env });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout.trimEnd().split("\n");
}

describe("slurm batch script", () => {
  it("an array task runs its own shard, and every word arrives as it was given", () => {
    const step: LaunchStep = { stage: "filter", kind: "record", shards: 4, after: [] };
    const script = slurmScript(step, invocation, config, "/logs/filter-%A_%a.log");
    expect(script).toContain("#SBATCH --array=0-3\n");
    expect(script).toContain("#SBATCH --output=/logs/filter-%A_%a.log\n");
    expect(script).toContain("#SBATCH --cpus-per-task=1\n");
    expect(script).not.toContain("--partition");
    // the config's set-up lines run before the pipeline, in the job's shell
    expect(script).toContain("\nexport FROM_SETUP=1\nexec printf ");
    expect(wordsOf(script, "2")).toEqual([
      "run",
      "filter",
      "--only",
      "--shard",
      "2/4",
      "--config",
      awkward,
      "--set",
      "stages.filter.note=two words",
      "--limit",
      "7",
    ]);
  });

  it("a global stage, or a record-wise stage of one shard, is a single job that runs unsharded", () => {
    for (const step of [
      { stage: "dedup", kind: "global", shards: 1, after: [] },
      { stage: "filter", kind: "record", shards: 1, after: [] },
    ] as LaunchStep[]) {
      const script = slurmScript(step, invocation, config, "/logs/x-%j.log");
      expect(script).not.toContain("--array");
      expect(wordsOf(script)).not.toContain("--shard");
    }
  });
});

describe("a key given with --set", () => {
  it("is refused before anything is written, naming the environment as the way to pass it", () => {
    for (const set of ["llm.scorer.api_key=sk-secret-123", "api_key=sk-secret-123"]) {
      let message = "";
      try {
        pipelineInvocation({ config: "c.yaml", sets: ["stages.filter.note=x", set] }, "/");
      } catch (e) {
        message = (e as Error).message;
      }
      expect(message).toContain("api_key=...");
      expect(message).toContain("OPENAI_API_KEY");
      expect(message).toContain("launch.k8s.secret");
      expect(message).not.toContain("sk-secret-123");
    }
    // a setting whose name only contains the word is not a key
    expect(
      pipelineInvocation({ config: "c.yaml", sets: ["llm.scorer.api_key_env=MY_KEY"] }, "/").options,
    ).toContain("llm.scorer.api_key_env=MY_KEY");
  });
});
