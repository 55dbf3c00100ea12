// How a launched process runs the pipeline: the same program that runs `launch` (or the configured
// `launch.command`), from the same directory, with the same config, data dir and overrides, so that
// every shard computes the configuration hash the launcher saw.
import { resolve } from "node:path";
import { isSecretSet } from "../config/load.js";
import { UserError } from "../errors.js";
import type { LaunchStep } from "./plan.js";

export interface PipelineInvocation {
  /** the program and its leading arguments, e.g. [node, --import, tsx, /repo/pipeline/main.ts] */
  program: string[];
  /** the directory it runs from (relative paths in the config resolve against it) */
  cwd: string;
  /** options every stage process gets: --config, --data-dir, --set, --limit */
  options: string[];
}

export interface InvocationOptions {
  config: string;
  dataDir?: string;
  sets: string[];
  limit?: number;
  /** `launch.command` from the config; unset: this very process's program */
  command?: string[];
}

export function pipelineInvocation(options: InvocationOptions, cwd = process.cwd()): PipelineInvocation {
  const program = options.command ?? [
    process.execPath,
    ...process.execArgv,
    resolve(cwd, process.argv[1] ?? "pipeline/main.ts"),
  ];
  const secret = options.sets.find(isSecretSet);
  if (secret) {
    throw new UserError(
      `launch: --set ${secret.slice(0, secret.indexOf("=") + 1)}... would write the key into every job script, ` +
        "manifest and printed command; give it through the environment instead (OPENAI_API_KEY, or the " +
        "variable llm.<role>.api_key_env names: the local executor and sbatch pass the launching shell's " +
        "environment on) or, on Kubernetes, in the Secret named by launch.k8s.secret",
    );
  }
  const flags = ["--config", resolve(cwd, options.config)];
  if (options.dataDir) flags.push("--data-dir", resolve(cwd, options.dataDir));
  for (const set of options.sets) flags.push("--set", set);
  if (options.limit !== undefined) flags.push("--limit", String(options.limit));
  return { program, cwd, options: flags };
}

/**
 * The `run` arguments of one process of a step. `shard` is the shard index, or a placeholder the
 * executor fills in (a shell variable on Slurm, an env reference on Kubernetes).
 */
export function runArgs(step: LaunchStep, shard: number | string, options: string[]): string[] {
  const args = ["run", step.stage, "--only"];
  if (step.kind === "record" && step.shards > 1) args.push("--shard", `${shard}/${step.shards}`);
  return [...args, ...options];
}

/** Quotes one word for a POSIX shell; plain words stay as they are, so commands stay readable. */
export function shellQuote(word: string): string {
  if (word !== "" && /^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** The command a person can paste to rerun one shard, from the directory the launch ran in. */
export function displayCommand(invocation: PipelineInvocation, args: string[]): string {
  const main = resolve(invocation.cwd, "pipeline/main.ts");
  const isOurs = invocation.program.at(-1) === main;
  const program = isOurs ? ["pnpm", "pipeline"] : invocation.program;
  return `cd ${shellQuote(invocation.cwd)} && ${[...program, ...args].map(shellQuote).join(" ")}`;
}
