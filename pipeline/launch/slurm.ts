// The Slurm executor: one batch script per stage, a job array of N tasks for a record-wise stage and
// a single job for a global one, submitted in pipeline order, each held by `--dependency=afterok` on
// the jobs of the stages it reads. The scripts stay under the launch directory, so one shard can be
// resubmitted by hand (`sbatch --array=K script`).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { SlurmLaunchConfig } from "../config/launch.js";
import { UserError } from "../errors.js";
import { type PipelineInvocation, runArgs, shellQuote } from "./invocation.js";
import type { LaunchStep } from "./plan.js";
import { requireTool, runTool } from "./tools.js";

export interface SlurmJob {
  stage: string;
  script: string;
  /** the log file pattern: %A job id, %a array index (%j for a single job) */
  logs: string;
  jobId?: string;
  dependsOn: string[];
}

/** The batch script of one step: sbatch directives from the config, then the pipeline's `run`. */
export function slurmScript(
  step: LaunchStep,
  invocation: PipelineInvocation,
  config: SlurmLaunchConfig,
  logs: string,
): string {
  const array = step.kind === "record" && step.shards > 1;
  const resources = step.kind === "global" ? config.global : {};
  const directives = [
    `--job-name=cf-${step.stage}`,
    ...(array ? [`--array=0-${step.shards - 1}`] : []),
    `--output=${logs}`,
    ...(config.partition ? [`--partition=${config.partition}`] : []),
    ...((resources.time ?? config.time) ? [`--time=${resources.time ?? config.time}`] : []),
    `--cpus-per-task=${resources.cpus_per_task ?? config.cpus_per_task}`,
    ...((resources.mem ?? config.mem) ? [`--mem=${resources.mem ?? config.mem}`] : []),
    // a failed upstream job makes this one's dependency unsatisfiable: cancel it rather than leave
    // it pending for ever in the queue
    "--kill-on-invalid-dep=yes",
    ...config.extra_args,
  ];
  // the shard comes from the array task id, expanded by the job's shell: the one word left unquoted
  const taskId = "$" + "{SLURM_ARRAY_TASK_ID}";
  const args = runArgs(step, "@SHARD@", invocation.options).map((word) =>
    word.includes("@SHARD@") ? `"${word.replace("@SHARD@", taskId)}"` : shellQuote(word),
  );
  return [
    "#!/bin/bash",
    ...directives.map((d) => `#SBATCH ${d}`),
    `# ${step.stage}: written by \`pnpm pipeline launch --executor slurm\`.${
      array ? ` Resubmit one shard alone with \`sbatch --array=K ${"<this file>"}\`.` : ""
    }`,
    "set -euo pipefail",
    `cd ${shellQuote(invocation.cwd)}`,
    ...config.setup,
    `exec ${[...invocation.program.map(shellQuote), ...args].join(" ")}`,
    "",
  ].join("\n");
}

export interface SlurmLaunchOptions {
  invocation: PipelineInvocation;
  config: SlurmLaunchConfig;
  /** where the scripts and the logs go (kept) */
  dir: string;
  out: NodeJS.WritableStream;
}

/** Writes every script first, then submits them in order; returns the jobs with their ids. */
export async function launchSlurm(steps: LaunchStep[], options: SlurmLaunchOptions): Promise<SlurmJob[]> {
  const sbatch = requireTool("sbatch", "launch --executor slurm");
  const logDir = join(options.dir, "logs");
  mkdirSync(logDir, { recursive: true });
  const jobs = steps.map((step, i): SlurmJob => {
    const array = step.kind === "record" && step.shards > 1;
    const logs = join(logDir, array ? `${step.stage}-%A_%a.log` : `${step.stage}-%j.log`);
    const script = join(options.dir, `${String(i + 1).padStart(2, "0")}-${step.stage}.sbatch`);
    writeFileSync(script, slurmScript(step, options.invocation, options.config, logs), { mode: 0o755 });
    return { stage: step.stage, script, logs, dependsOn: [] };
  });
  const idOf = new Map<string, string>();
  for (const [i, step] of steps.entries()) {
    const job = jobs[i]!;
    job.dependsOn = step.after.map((stage) => idOf.get(stage)!).filter(Boolean);
    const args = ["--parsable"];
    if (job.dependsOn.length > 0) args.push(`--dependency=afterok:${job.dependsOn.join(":")}`);
    args.push(job.script);
    const result = await runTool(sbatch, args, { cwd: options.invocation.cwd });
    // `--parsable` prints `jobid` or `jobid;cluster`
    const jobId = result.stdout.trim().split(";")[0];
    if (result.code !== 0 || !jobId || !/^\d+$/.test(jobId)) {
      const submitted = jobs.filter((j) => j.jobId).map((j) => `${j.stage} ${j.jobId}`);
      throw new UserError(
        `sbatch refused ${step.stage} (exit ${result.code}): ${result.stderr.trim() || result.stdout.trim()}\n` +
          `The scripts are in ${options.dir}. ${
            submitted.length
              ? `Already submitted: ${submitted.join(", ")} (scancel them, or let them run and launch again: finished shards are skipped).`
              : "Nothing was submitted."
          } Check launch.slurm in the config (partition, time, mem, extra_args).`,
      );
    }
    job.jobId = jobId;
    idOf.set(step.stage, jobId);
    options.out.write(
      `${step.stage}: job ${jobId}${step.kind === "record" && step.shards > 1 ? ` (array 0-${step.shards - 1})` : ""}` +
        `${job.dependsOn.length ? ` after ${job.dependsOn.join(", ")}` : ""}; script ${job.script}\n`,
    );
  }
  writeFileSync(join(options.dir, "jobs.json"), `${JSON.stringify(jobs, null, 2)}\n`);
  return jobs;
}
