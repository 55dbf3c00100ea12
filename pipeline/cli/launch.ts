// `pnpm pipeline launch`: runs stages as shards on this machine, on Slurm or on Kubernetes.
import { join } from "node:path";
import type { CommandModule } from "yargs";
import { UserError } from "../errors.js";
import { pipelineInvocation } from "../launch/invocation.js";
import { launchK8s } from "../launch/k8s.js";
import { launchLocal } from "../launch/local.js";
import { launchStamp, planLaunch } from "../launch/plan.js";
import { launchSlurm } from "../launch/slurm.js";
import { waitingCommands, writesBatchFiles } from "../llm/batch/status.js";
import { createLogger } from "../log.js";
import { Runner } from "../runner.js";
import { createServices } from "../services.js";
import type { Stage } from "../stage.js";
import { checkLimit, type DataOptions, loadFromArgs, withDataOptions } from "./common.js";

const EXECUTORS = ["local", "slurm", "k8s"] as const;

type LaunchArgs = DataOptions & {
  stages: string[];
  executor: string;
  shards?: number;
  only: boolean;
  limit?: number;
  apply: boolean;
  "batch-round": boolean;
};

export function launchCommand(stages: readonly Stage<unknown>[]): CommandModule {
  const command: CommandModule<object, LaunchArgs> = {
    command: "launch <stages..>",
    describe: "run stages as N shards each: here (local), as Slurm job arrays or Kubernetes Indexed Jobs",
    builder: (y) =>
      withDataOptions(y)
        .positional("stages", {
          type: "string",
          array: true,
          choices: stages.map((s) => s.name),
          demandOption: true,
          describe: "stages to run (with every upstream stage that is not complete, unless --only)",
        })
        .option("executor", {
          type: "string",
          choices: EXECUTORS,
          default: "local",
          describe: "local: processes on this machine; slurm: sbatch job arrays; k8s: Indexed Jobs",
        })
        .option("shards", {
          type: "number",
          describe: "shards of each record-wise stage (default launch.shards); global stages run as one",
        })
        .option("only", {
          type: "boolean",
          default: false,
          describe: "launch only the named stages, not their upstream",
        })
        .option("limit", {
          type: "number",
          describe: "take only the first N rows of each source (for trials)",
        })
        .option("apply", {
          type: "boolean",
          default: false,
          describe: "k8s: apply the Jobs with kubectl, one stage after another (else print them)",
        })
        .option("batch-round", {
          type: "boolean",
          default: false,
          hidden: true,
          describe: "slurm: a stage's job that stopped for batch files submits its next round (nothing else)",
        }),
    handler: async (args) => {
      const loaded = loadFromArgs(args, stages);
      const launch = loaded.config.launch;
      const shards = args.shards ?? launch.shards;
      if (!Number.isInteger(shards) || shards < 1) {
        throw new UserError(`--shards: expected a whole number of shards, 1 or more; got ${args.shards}`);
      }
      checkLimit(args.limit);
      if (args.apply && args.executor !== "k8s") {
        throw new UserError("--apply is for --executor k8s (slurm submits, local runs, without it)");
      }
      const log = createLogger();
      const services = createServices(loaded.config, { dataDir: loaded.config.data_dir, log });
      const runner = new Runner(stages, loaded, {
        services,
        log,
        ...(args.limit !== undefined ? { limit: args.limit } : {}),
      });
      const steps = planLaunch(runner, args.stages, { only: args.only, shards });
      const stamp = launchStamp();
      const dir = join(runner.dataDir, "launch", `${args.executor}-${stamp}`);
      const invocation = pipelineInvocation({
        config: args.config,
        ...(args["data-dir"] ? { dataDir: args["data-dir"] } : {}),
        sets: args.set ?? [],
        ...(args.limit !== undefined ? { limit: args.limit } : {}),
        ...(launch.command ? { command: launch.command } : {}),
      });
      const out = process.stderr;
      out.write(
        `launch (${args.executor}): ${steps.map((s) => (s.shards > 1 ? `${s.stage} x${s.shards}` : s.stage)).join(", ")}\n`,
      );
      if (args.executor === "local") {
        await launchLocal(steps, { invocation, logDir: join(dir, "logs"), out });
        out.write(`launch: every stage done; logs in ${join(dir, "logs")}\n`);
      } else if (args.executor === "slurm") {
        const waiting = (stage: string) => waitingCommands(runner.store(stage).dir, loaded.config.llm);
        if (args["batch-round"] && !steps.some((s) => waiting(s.stage).length > 0)) {
          throw new UserError(
            "launch --batch-round: no stage waits for batch files; the stage's job stopped for another reason (see its log)",
          );
        }
        const relaunch = writesBatchFiles(loaded.config.llm)
          ? [
              "launch",
              ...args.stages,
              "--executor",
              "slurm",
              "--shards",
              "1",
              ...(args.only ? ["--only"] : []),
              "--batch-round",
              ...invocation.options,
            ]
          : undefined;
        const jobs = await launchSlurm(steps, {
          invocation,
          config: launch.slurm,
          dir,
          out,
          waiting,
          ...(relaunch ? { relaunch } : {}),
        });
        out.write(
          `launch: scripts and logs in ${dir}; watch with: squeue -j ${jobs.map((j) => j.jobId).join(",")}\n`,
        );
        process.stdout.write(`${jobs.map((j) => j.jobId).join(" ")}\n`);
      } else {
        const manifests = await launchK8s(steps, {
          config: launch.k8s,
          launchId: stamp,
          configFile: args.config,
          sets: args.set ?? [],
          ...(args.limit !== undefined ? { limit: args.limit } : {}),
          env: passedEnvironment(),
          dir,
          apply: args.apply,
          out,
        });
        if (!args.apply) {
          process.stdout.write(manifests.map((m) => m.yaml).join("---\n"));
          out.write(
            `launch: manifests in ${dir}. Apply them one at a time in this order, each after the one before completes ` +
              "(kubectl apply -f FILE; kubectl wait --for=condition=complete job/NAME), or launch again with --apply to have that done.\n",
          );
        }
      }
    },
  };
  return command as unknown as CommandModule;
}

/** Endpoints the pods need, taken from this environment; tokens go in launch.k8s.secret instead. */
function passedEnvironment(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const names = ["OPENAI_BASE_URL", "HF_ENDPOINT"];
  return Object.fromEntries(names.filter((n) => env[n]).map((n) => [n, env[n]!]));
}
