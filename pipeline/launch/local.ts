// The local executor: N shard processes of each record-wise stage side by side on this machine (a
// stage process is single-threaded, so a big box runs N of them for N cores), one stage after
// another in pipeline order; a global stage as one process.
import { spawn } from "node:child_process";
import { createWriteStream, mkdirSync, type WriteStream } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { UserError } from "../errors.js";
import { displayCommand, type PipelineInvocation, runArgs } from "./invocation.js";
import type { LaunchStep } from "./plan.js";

export interface LocalLaunchOptions {
  invocation: PipelineInvocation;
  /** where each process's output is kept, one file per shard */
  logDir: string;
  /** progress and the children's output, line by line with a `[stage k/N]` prefix */
  out: NodeJS.WritableStream;
}

/** A shard process that ended badly, with what a person needs to rerun it. */
export interface ShardFailure {
  stage: string;
  shard: number;
  exitCode: number;
  log: string;
  rerun: string;
}

// a shard's own scheduler variables would make a child of a launch run inside an array task
// pick the wrong shard (or shard a global stage); the launcher says which shard, always
const SCHEDULER_VARIABLES = ["SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", "JOB_COMPLETION_INDEX"];

export async function launchLocal(steps: LaunchStep[], options: LocalLaunchOptions): Promise<void> {
  mkdirSync(options.logDir, { recursive: true });
  const env = { ...process.env };
  for (const name of SCHEDULER_VARIABLES) delete env[name];
  const children = new Set<number>();
  let interrupts = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    interrupts++;
    if (interrupts === 1) {
      options.out.write(
        `\n${signal}: stopping the shards (each saves the records in flight); press Ctrl-C again to stop them at once\n`,
      );
    }
    // each child is in its own process group: a terminal's Ctrl-C reaches only us, and we tell each
    // child once per Ctrl-C, so a second one is its second, which makes it quit at once
    for (const pid of children) {
      try {
        process.kill(-pid, signal);
      } catch {}
    }
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    for (const step of steps) {
      if (interrupts > 0) break;
      const started = Date.now();
      options.out.write(
        `launch: ${step.stage}: ${step.shards === 1 ? "1 process" : `${step.shards} shard processes`}\n`,
      );
      const runs = Array.from({ length: step.shards }, (_, shard) =>
        runShard(step, shard, options, env, children),
      );
      const failures = (await Promise.all(runs)).filter((f): f is ShardFailure => f !== undefined);
      if (interrupts > 0) {
        throw new UserError(
          `interrupted during ${step.stage}; what the shards finished is saved: run the same launch command again to go on`,
          { exitCode: 130 },
        );
      }
      if (failures.length > 0) {
        const lines = failures.map(
          (f) =>
            `  ${f.stage} ${step.shards === 1 ? "" : `shard ${f.shard}/${step.shards}`} exited with ${f.exitCode}; its log: ${f.log}\n    rerun it alone: ${f.rerun}`,
        );
        const later = steps.slice(steps.indexOf(step) + 1).map((s) => s.stage);
        // a configuration error or a refused LLM key is the same in every shard: say so by the code
        const same = failures.every((f) => f.exitCode === failures[0]!.exitCode);
        throw new UserError(
          `${failures.length} of ${step.shards} ${step.stage} process(es) failed:\n${lines.join("\n")}\n` +
            `${later.length ? `Not started: ${later.join(", ")}. ` : ""}Rerun the same launch command to retry the failed shards and go on (finished shards are skipped).`,
          { exitCode: same && [2, 3].includes(failures[0]!.exitCode) ? failures[0]!.exitCode : 1 },
        );
      }
      options.out.write(`launch: ${step.stage}: done in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
    }
    if (interrupts > 0) {
      throw new UserError("interrupted; run the same launch command again to go on", { exitCode: 130 });
    }
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

function runShard(
  step: LaunchStep,
  shard: number,
  options: LocalLaunchOptions,
  env: NodeJS.ProcessEnv,
  children: Set<number>,
): Promise<ShardFailure | undefined> {
  const { invocation } = options;
  const args = runArgs(step, shard, invocation.options);
  const log = join(options.logDir, step.shards === 1 ? `${step.stage}.log` : `${step.stage}-${shard}.log`);
  const file = createWriteStream(log, { flags: "a" });
  const prefix = `[${step.stage}${step.shards === 1 ? "" : ` ${shard}/${step.shards}`}] `;
  const [program, ...leading] = invocation.program;
  const child = spawn(program!, [...leading, ...args], {
    cwd: invocation.cwd,
    env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  if (child.pid) children.add(child.pid);
  const copied = [child.stdout, child.stderr].map((stream) => copyLines(stream, file, prefix, options.out));
  return new Promise((done) => {
    let failure: ShardFailure | undefined;
    const fail = (exitCode: number) => {
      failure = { stage: step.stage, shard, exitCode, log, rerun: displayCommand(invocation, args) };
    };
    child.on("error", (error) => {
      file.write(`launch: could not start ${program}: ${error.message}\n`);
      fail(127);
    });
    child.on("close", async (code, signal) => {
      if (child.pid) children.delete(child.pid);
      await Promise.all(copied);
      if (code !== 0 && !failure) fail(code ?? (signal === "SIGKILL" ? 137 : 130));
      file.end(() => done(failure));
    });
  });
}

function copyLines(
  stream: NodeJS.ReadableStream,
  file: WriteStream,
  prefix: string,
  out: NodeJS.WritableStream,
): Promise<void> {
  const lines = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
  lines.on("line", (line) => {
    file.write(`${line}\n`);
    out.write(`${prefix}${line}\n`);
  });
  return new Promise((done) => lines.once("close", () => done()));
}
