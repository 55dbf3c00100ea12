// The Slurm executor: one batch script per stage, a job array of N tasks for a record-wise stage and
// a single job for a global one, submitted in pipeline order, each held by `--dependency=afterok` on
// the jobs of the stages it reads. The scripts stay under the launch directory, so one shard can be
// resubmitted by hand (`sbatch --array=K script`). A stage waiting for `files` batches gets a job per
// file before it, and its job launches the next round when it writes another.
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
  /** `launch` arguments that submit the stage's next round when it stops for batch files (exit 3) */
  relaunch?: string[],
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
  const program = invocation.program.map(shellQuote);
  const note = `${step.stage}: written by \`pnpm pipeline launch --executor slurm\`.${
    array ? ` Resubmit one shard alone with \`sbatch --array=K ${"<this file>"}\`.` : ""
  }`;
  return script(directives, note, invocation, config, [
    ...(relaunch
      ? [
          "set +e",
          [...program, ...args].join(" "),
          "rc=$?",
          // 3 is also a server that never answered: `--batch-round` submits nothing unless a stage
          // waits for batch files. This job's exit 3 cancels the jobs after it; the relaunch has
          // submitted them again behind the new round.
          `if [ "$rc" -eq 3 ]; then ${[...program, ...relaunch.map(shellQuote)].join(" ")}; fi`,
          'exit "$rc"',
        ]
      : [`exec ${[...program, ...args].join(" ")}`]),
  ]);
}

/** A job's script: its directives and a note, then `body` from the launch's directory after `setup`. */
function script(
  directives: string[],
  note: string,
  invocation: PipelineInvocation,
  config: SlurmLaunchConfig,
  body: string[],
): string {
  return [
    "#!/bin/bash",
    ...directives.map((d) => `#SBATCH ${d}`),
    `# ${note}`,
    "set -euo pipefail",
    `cd ${shellQuote(invocation.cwd)}`,
    ...config.setup,
    ...body,
    "",
  ].join("\n");
}

/** The script of a job that answers one `files` batch with its command. */
export function slurmBatchScript(
  stage: string,
  command: string,
  invocation: PipelineInvocation,
  config: SlurmLaunchConfig,
  logs: string,
): string {
  const b = config.batch;
  const directives = [
    `--job-name=cf-${stage}-batch`,
    `--output=${logs}`,
    ...((b.partition ?? config.partition) ? [`--partition=${b.partition ?? config.partition}`] : []),
    ...(b.gpus !== undefined ? [`--gpus=${b.gpus}`] : []),
    ...((b.time ?? config.time) ? [`--time=${b.time ?? config.time}`] : []),
    ...(b.cpus_per_task ? [`--cpus-per-task=${b.cpus_per_task}`] : []),
    ...(b.mem ? [`--mem=${b.mem}`] : []),
    ...config.extra_args,
  ];
  const note = `a ${stage} batch file: written by \`pnpm pipeline launch --executor slurm\`.`;
  return script(directives, note, invocation, config, [command]);
}

export interface SlurmLaunchOptions {
  invocation: PipelineInvocation;
  config: SlurmLaunchConfig;
  /** where the scripts and the logs go (kept) */
  dir: string;
  out: NodeJS.WritableStream;
  /** the commands of the `files` batches a stage waits for: each a job the stage's job waits for */
  waiting?: (stage: string) => string[];
  /** set when some role writes `files` batches: see `slurmScript` */
  relaunch?: string[];
}

/** Writes every script first, then submits them in order; returns the jobs with their ids. */
export async function launchSlurm(steps: LaunchStep[], options: SlurmLaunchOptions): Promise<SlurmJob[]> {
  if (options.relaunch && steps.some((s) => s.kind === "record" && s.shards > 1)) {
    throw new UserError(
      "launch --executor slurm: a role with batch.provider files runs each stage as one job (its rounds " +
        "gather every record of the stage); launch with --shards 1",
    );
  }
  const sbatch = requireTool("sbatch", "launch --executor slurm");
  const logDir = join(options.dir, "logs");
  mkdirSync(logDir, { recursive: true });
  const jobs: SlurmJob[] = [];
  /** per step: its stage's job, and the jobs of the batch files it waits for */
  const planned: { job: SlurmJob; batches: SlurmJob[] }[] = [];
  for (const [i, step] of steps.entries()) {
    const array = step.kind === "record" && step.shards > 1;
    const logs = join(logDir, array ? `${step.stage}-%A_%a.log` : `${step.stage}-%j.log`);
    const name = `${String(i + 1).padStart(2, "0")}-${step.stage}`;
    const batches = (options.waiting?.(step.stage) ?? []).map((command, k): SlurmJob => {
      const file = join(options.dir, `${name}-batch-${k + 1}.sbatch`);
      const batchLogs = join(logDir, `${step.stage}-batch-%j.log`);
      const text = slurmBatchScript(step.stage, command, options.invocation, options.config, batchLogs);
      writeFileSync(file, text, { mode: 0o755 });
      return { stage: `${step.stage} (batch)`, script: file, logs: batchLogs, dependsOn: [] };
    });
    const file = join(options.dir, `${name}.sbatch`);
    const text = slurmScript(step, options.invocation, options.config, logs, options.relaunch);
    writeFileSync(file, text, { mode: 0o755 });
    const job: SlurmJob = { stage: step.stage, script: file, logs, dependsOn: [] };
    planned.push({ job, batches });
    jobs.push(...batches, job);
  }
  const idOf = new Map<string, string>();
  const submit = async (job: SlurmJob, step: LaunchStep | undefined) => {
    const args = ["--parsable"];
    if (job.dependsOn.length > 0) args.push(`--dependency=afterok:${job.dependsOn.join(":")}`);
    args.push(job.script);
    const result = await runTool(sbatch, args, { cwd: options.invocation.cwd });
    // `--parsable` prints `jobid` or `jobid;cluster`
    const jobId = result.stdout.trim().split(";")[0];
    if (result.code !== 0 || !jobId || !/^\d+$/.test(jobId)) {
      const submitted = jobs.filter((j) => j.jobId).map((j) => `${j.stage} ${j.jobId}`);
      throw new UserError(
        `sbatch refused ${job.stage} (exit ${result.code}): ${result.stderr.trim() || result.stdout.trim()}\n` +
          `The scripts are in ${options.dir}. ${
            submitted.length
              ? `Already submitted: ${submitted.join(", ")} (scancel them, or let them run and launch again: finished shards are skipped).`
              : "Nothing was submitted."
          } Check launch.slurm in the config (partition, time, mem, extra_args).`,
      );
    }
    job.jobId = jobId;
    options.out.write(
      `${job.stage}: job ${jobId}${step && step.kind === "record" && step.shards > 1 ? ` (array 0-${step.shards - 1})` : ""}` +
        `${job.dependsOn.length ? ` after ${job.dependsOn.join(", ")}` : ""}; script ${job.script}\n`,
    );
  };
  for (const [i, step] of steps.entries()) {
    const { job, batches } = planned[i]!;
    for (const batch of batches) await submit(batch, undefined);
    job.dependsOn = [
      ...batches.map((b) => b.jobId!),
      ...step.after.map((stage) => idOf.get(stage)!).filter(Boolean),
    ];
    await submit(job, step);
    idOf.set(step.stage, job.jobId!);
  }
  writeFileSync(join(options.dir, "jobs.json"), `${JSON.stringify(jobs, null, 2)}\n`);
  return jobs;
}
