// The commands that drive the pipeline: run, status, stages, cat, reset (and review, show).
import type { CommandModule } from "yargs";
import type { LoadedConfig } from "../config/load.js";
import { formatDuration } from "../runner/progress.js";
import { parseShardSpec, type ShardSpec, shardFromEnvironment } from "../runner/shard.js";
import type { Stage } from "../stage.js";
import { auditCommand } from "./audit.js";
import { checkLimit, type DataOptions, loadFromArgs, withDataOptions } from "./common.js";
import { runAndReport, runnerFor } from "./report.js";
import { reviewCommands } from "./review.js";
import {
  busyText,
  printBatches,
  printEndpointUsage,
  printStageDetail,
  shardCommands,
  sourceStatusLines,
  stateCell,
  statusJson,
  withShardRows,
} from "./status-view.js";
import { printTable } from "./table.js";
import { whereLines } from "./where.js";

type RunArgs = DataOptions & {
  stages: string[];
  only: boolean;
  force: boolean;
  limit?: number;
  "dry-run": boolean;
  cache: boolean;
  shard?: string;
  wait: boolean;
};
type StatusArgs = DataOptions & { json: boolean; limit?: number; stage?: string; refresh: boolean };
type CatArgs = DataOptions & { stage: string; rejects: boolean };
type ResetArgs = DataOptions & { stage: string; purge: boolean };

function openRunner(
  stages: readonly Stage<unknown>[],
  args: DataOptions & { limit?: number; cache?: boolean; wait?: boolean },
  shardOf?: (loaded: LoadedConfig) => ShardSpec | undefined,
) {
  checkLimit(args.limit);
  const loaded = loadFromArgs(args, stages);
  const shard = shardOf?.(loaded);
  const runner = runnerFor(stages, loaded, {
    limit: args.limit,
    noCache: args.cache === false,
    ...(args.wait === false ? { noWait: true } : {}),
    ...(shard ? { shard } : {}),
  });
  return { runner, services: runner.options.services, log: runner.log, shard };
}

/** `--shard K/N`, else the shard a Slurm array or a Kubernetes Indexed Job started this process as. */
function shardOfRun(args: RunArgs, loaded: LoadedConfig): ShardSpec | undefined {
  if (args.shard !== undefined) return parseShardSpec(args.shard);
  // `launch.shards` defaults to 1, which says nothing about an Indexed Job's completions
  const configured = (loaded.config as { launch?: { shards?: number } }).launch?.shards;
  return shardFromEnvironment(process.env, configured && configured > 1 ? configured : undefined)?.spec;
}

export function pipelineCommands(stages: readonly Stage<unknown>[]): CommandModule[] {
  const names = stages.map((s) => s.name);
  const run: CommandModule<object, RunArgs> = {
    command: "run <stages..>",
    describe: "run stages (and every upstream stage that is not complete)",
    builder: (y) =>
      withDataOptions(y)
        .positional("stages", {
          type: "string",
          array: true,
          choices: names,
          demandOption: true,
          describe: "stages to run",
        })
        .option("only", {
          type: "boolean",
          default: false,
          describe: "run only the named stages, not their upstream",
        })
        .option("force", {
          type: "boolean",
          default: false,
          describe: "recompute the named stages; downstream becomes stale",
        })
        .option("limit", {
          type: "number",
          describe: "take only the first N rows of each source (for trials)",
        })
        .option("dry-run", {
          type: "boolean",
          default: false,
          describe: "estimate LLM requests and tokens; send nothing",
        })
        .option("cache", {
          type: "boolean",
          default: true,
          describe: "use the LLM response cache (--no-cache to bypass)",
        })
        .option("wait", {
          type: "boolean",
          default: true,
          describe:
            "--no-wait: LLM roles in batch mode submit their batches and the run stops (exit 3); run again to collect",
        })
        .option("shard", {
          type: "string",
          describe:
            "K/N: run only shard K (0 to N-1) of N of record-wise stages (default: from SLURM_ARRAY_TASK_ID/COUNT, or JOB_COMPLETION_INDEX with $CODEFEEDBACK_SHARDS)",
        }),
    handler: async (args) => {
      const { runner, services, log, shard } = openRunner(stages, args, (loaded) => shardOfRun(args, loaded));
      // which provider and model each LLM role would use: a dry-run is where one checks that
      if (args["dry-run"]) {
        for (const line of whereLines(runner.loaded, names)) log.info(line);
        for (const line of services.llmRoles?.() ?? []) log.info(line);
      }
      await runAndReport(runner, args.stages, {
        only: args.only,
        force: args.force,
        dryRun: args["dry-run"],
        ...(shard ? { shard } : {}),
      });
    },
  };

  const status: CommandModule<object, StatusArgs> = {
    command: "status",
    describe: "state, counts, LLM usage, sandbox programs and timings of every stage",
    builder: (y) =>
      withDataOptions(y)
        .option("json", { type: "boolean", default: false, describe: "print JSON" })
        .option("limit", { type: "number", describe: "judge staleness as for a run with --limit N" })
        .option("stage", {
          type: "string",
          choices: names,
          describe: "only this stage, with the full text of its last error",
        })
        .option("refresh", {
          type: "boolean",
          default: false,
          describe: "ask the provider about batches left running and collect the finished ones",
        }),
    handler: async (args) => {
      const { runner, services, log } = openRunner(stages, { ...args, wait: !args.refresh });
      const batches = args.refresh ? services.llmBatches?.() : undefined;
      try {
        for (const s of stages) await batches?.refresh(runner.store(s.name).dir, s.name);
      } finally {
        if (batches) await services.close();
      }
      for (const line of whereLines(runner.loaded, names)) log.info(line);
      const shown = args.stage ? stages.filter((s) => s.name === args.stage) : stages;
      const rows = shown.map((s) => runner.status(s.name));
      if (args.json) {
        // a complete sharded stage's statistics come from the union of its shards, as the report's do
        const json = [];
        for (const row of rows) {
          const whole =
            row.shards && row.state === "complete" ? await runner.manifestOf(row.stage) : undefined;
          json.push(statusJson(whole ? { ...row, manifest: whole } : row));
        }
        process.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
        return;
      }
      if (args.stage) {
        printStageDetail(rows[0]!);
        return;
      }
      for (const line of services.llmRoles?.() ?? []) log.info(line);
      printTable(
        [
          "stage",
          "state",
          "in",
          "out",
          "rejected",
          "failed",
          "llm req",
          "cached",
          "tokens",
          "cost $",
          "programs",
          "busy",
          "elapsed",
          "config",
        ],
        rows.flatMap(withShardRows).map((r) => {
          const m = r.manifest;
          const u = m?.usage;
          const x = m?.sandbox;
          return [
            r.stage,
            stateCell(r),
            m?.counts.in ?? "",
            m?.counts.out ?? "",
            m?.counts.rejected ?? "",
            m?.counts.failed ?? "",
            u ? u.requests : "",
            u ? u.cachedRequests : "",
            u ? u.promptTokens + u.completionTokens : "",
            u?.costUsd ? u.costUsd.toFixed(2) : "",
            x ? x.runs : "",
            x ? busyText(x.busyMs) : "",
            m ? formatDuration(m.elapsedMs) : "",
            r.configHash.slice(0, 8),
          ];
        }),
      );
      for (const line of shardCommands(rows)) process.stdout.write(`${line}\n`);
      for (const line of sourceStatusLines(rows)) process.stdout.write(`${line}\n`);
      printEndpointUsage(rows);
      printBatches(shown.map((s) => ({ stage: s.name, dir: runner.store(s.name).dir })));
    },
  };

  const list: CommandModule = {
    command: "stages",
    describe: "every stage with what it does and its upstream stages",
    handler: () => {
      printTable(
        ["stage", "kind", "upstream", "what it does"],
        stages.map((s) => [s.name, s.kind, s.upstream.join(", ") || "-", s.description]),
      );
    },
  };

  const cat: CommandModule<object, CatArgs> = {
    command: "cat <stage>",
    describe: "print a stage's output records (or rejects) as JSONL",
    builder: (y) =>
      withDataOptions(y)
        .positional("stage", { type: "string", choices: names, demandOption: true })
        .option("rejects", {
          type: "boolean",
          default: false,
          describe: "print the rejects with their reasons",
        }),
    handler: async (args) => {
      const { runner } = openRunner(stages, args);
      const out = process.stdout;
      const status = runner.status(args.stage);
      if (status.state === "disabled") {
        process.stderr.write(`note: ${args.stage} is switched off (${status.reason}): it has no records\n`);
        return;
      }
      if (status.state !== "complete") {
        process.stderr.write(
          `note: ${args.stage} is ${status.state}${status.reason ? ` (${status.reason})` : ""}; showing what it has committed so far\n`,
        );
      }
      for await (const record of runner.read(args.stage, { rejects: args.rejects })) {
        if (!out.write(`${JSON.stringify(record)}\n`)) await new Promise((r) => out.once("drain", r));
      }
    },
  };

  const reset: CommandModule<object, ResetArgs> = {
    command: "reset <stage>",
    describe: "remove a stage's outputs; downstream stages become stale",
    builder: (y) =>
      withDataOptions(y)
        .positional("stage", { type: "string", choices: names, demandOption: true })
        .option("purge", {
          type: "boolean",
          default: false,
          describe: "also delete the stage's work files (downloads)",
        }),
    handler: (args) => {
      const { runner } = openRunner(stages, args);
      runner.reset(args.stage, undefined, { purge: args.purge });
      process.stderr.write(
        `${args.stage}: outputs removed; downstream: ${runner.downstreamOf(args.stage).join(", ") || "none"} marked stale\n`,
      );
    },
  };
  // yargs checks the options at run time (the builders above); the handlers get them typed.
  return [
    run,
    status,
    list,
    cat,
    reset,
    auditCommand(stages),
    ...reviewCommands(stages),
  ] as unknown as CommandModule[];
}
