// `pnpm pipeline eval model`: the paper's evaluation of a model on HumanEval(+) and MBPP(+), single-
// turn and multi-turn with execution, human or oracle feedback. Parse, call, print.
import { createHash } from "node:crypto";
import path from "node:path";
import type { CommandModule } from "yargs";
import { loadConfig } from "../config/load.js";
import type { RootConfig } from "../config/schema.js";
import { UserError } from "../errors.js";
import { loadBenchmark } from "../eval/model/benchmarks.js";
import {
  BENCHMARK_NAMES,
  type BenchmarkName,
  type EvalModelConfig,
  FEEDBACK_KINDS,
  type FeedbackKind,
} from "../eval/model/config.js";
import { evaluateModel } from "../eval/model/evaluate-model.js";
import { roundsTable } from "../eval/model/metrics.js";
import { promptTexts } from "../eval/model/prompts.js";
import { roleConfig } from "../llm/config.js";
import { createLogger } from "../log.js";
import { createServices } from "../services.js";
import { UsageMeter } from "../usage.js";
import { printTable } from "./table.js";

interface ModelArgs {
  benchmark: BenchmarkName;
  out: string;
  role?: string;
  model?: string;
  "base-url"?: string;
  rounds?: number;
  feedback?: FeedbackKind;
  "feedback-role"?: string;
  limit?: number;
  workers?: number;
  "run-timeout"?: number;
  config?: string;
  "data-dir"?: string;
  set?: string[];
  force: boolean;
  cache: boolean;
  wait: boolean;
}

function positiveInteger(name: string, value: number | undefined): void {
  if (value !== undefined && (!Number.isInteger(value) || value < 1))
    throw new UserError(`--${name} must be a positive integer, got ${value}`);
}

/** The config's `eval.model` with the flags laid over it, and the LLM section with an ad-hoc role. */
function settings(
  args: ModelArgs,
  root: RootConfig,
): { em: EvalModelConfig; llm: RootConfig["llm"]; role: string } {
  for (const name of ["rounds", "limit", "workers"] as const) positiveInteger(name, args[name]);
  const runTimeout = args["run-timeout"];
  // yargs reads "soon" as NaN; left through, every task would fail in the sandbox instead
  if (runTimeout !== undefined && !(Number.isFinite(runTimeout) && runTimeout > 0))
    throw new UserError(`--run-timeout must be a positive number of seconds, got ${runTimeout}`);
  const em: EvalModelConfig = {
    ...root.eval.model,
    ...(args.rounds !== undefined ? { rounds: args.rounds } : {}),
    ...(args.feedback !== undefined ? { feedback: args.feedback } : {}),
    ...(args["feedback-role"] !== undefined ? { feedback_role: args["feedback-role"] } : {}),
    ...(args.workers !== undefined ? { workers: args.workers } : {}),
    ...(args["run-timeout"] !== undefined ? { run_timeout_s: args["run-timeout"] } : {}),
  };
  const role = args.role ?? em.role;
  if (args.model === undefined && args["base-url"] === undefined) return { em, llm: root.llm, role };
  if (args.model === undefined || args["base-url"] === undefined)
    throw new UserError(
      "--model and --base-url go together: the model's name and its OpenAI-compatible server",
    );
  const base = roleConfig(root.llm, role);
  if (!base)
    throw new UserError(`--role ${role}: the roles are scorer, weak and strong (llm.<role> in the config)`);
  // An ad-hoc role: the named role's settings (key variable, timeouts, concurrency) with this server and model.
  return {
    em,
    llm: { ...root.llm, [role]: { ...base, base_url: args["base-url"], model: args.model } },
    role,
  };
}

export const modelCommand: CommandModule<object, ModelArgs> = {
  command: "model",
  describe:
    "the paper's model evaluation: HumanEval(+)/MBPP(+), pass@1 per round with execution/human/oracle feedback",
  builder: (y) =>
    y
      .option("benchmark", {
        choices: BENCHMARK_NAMES,
        demandOption: true,
        describe: "benchmark to evaluate on",
      })
      .option("out", {
        type: "string",
        demandOption: true,
        describe: "directory for results.jsonl, metrics.json, run.json",
      })
      .option("role", {
        type: "string",
        describe: "LLM role serving the model (default: eval.model.role, weak)",
      })
      .option("model", {
        type: "string",
        describe: "model name on --base-url (an ad-hoc role; with --base-url)",
      })
      .option("base-url", {
        type: "string",
        describe: "OpenAI-compatible server of --model, e.g. http://127.0.0.1:8000/v1",
      })
      .option("rounds", {
        type: "number",
        describe: "attempts per task (default: eval.model.rounds, 2 as in the paper)",
      })
      .option("feedback", {
        choices: FEEDBACK_KINDS,
        describe: "feedback between rounds (default: eval.model.feedback, execution)",
      })
      .option("feedback-role", {
        type: "string",
        describe: "LLM role writing human/oracle guidance (default: strong)",
      })
      .option("limit", { type: "number", describe: "evaluate the first N tasks only" })
      .option("workers", { type: "number", describe: "tasks at once (default: eval.model.workers)" })
      .option("run-timeout", {
        type: "number",
        describe: "seconds per solution run (default: eval.model.run_timeout_s)",
      })
      .option("config", {
        type: "string",
        describe: "YAML config for llm:, hub:, sandbox: and eval.model: (default: built-in)",
      })
      .option("data-dir", {
        type: "string",
        describe: "where the response cache and the benchmark files live (overrides data_dir)",
      })
      .option("set", {
        type: "string",
        array: true,
        describe: "override a config key, e.g. --set eval.model.workers=8",
      })
      .option("force", {
        type: "boolean",
        default: false,
        describe: "start over in --out even if it holds another evaluation",
      })
      .option("cache", {
        type: "boolean",
        default: true,
        describe: "answer from the response cache (--no-cache asks again)",
      })
      .option("wait", {
        type: "boolean",
        default: true,
        describe:
          "--no-wait: LLM roles in batch mode submit their round and the run stops (exit 3); run again to collect",
      }),
  handler: async (args) => {
    const { config: root } = loadConfig({
      ...(args.config ? { file: args.config } : {}),
      sets: args.set ?? [],
      ...(args["data-dir"] ? { dataDir: args["data-dir"] } : {}),
    });
    const { em, llm, role } = settings(args, root);
    const log = createLogger("eval model");
    const services = createServices(
      { ...root, llm },
      { dataDir: root.data_dir, noCache: !args.cache, log, ...(args.wait ? {} : { noWait: true }) },
    );
    const controller = new AbortController();
    const onSignal = () => controller.abort();
    process.once("SIGINT", onSignal);
    try {
      const usage = new UsageMeter();
      const model = services.llm(role, usage);
      const guide = em.feedback === "execution" ? undefined : services.llm(em.feedback_role, usage);
      const loaded = await loadBenchmark(args.benchmark, em.benchmarks[args.benchmark], {
        hub: root.hub,
        dir: path.join(root.data_dir, "eval-benchmarks"),
        ...(args.limit !== undefined ? { limit: args.limit } : {}),
        signal: controller.signal,
        log,
      });
      const report = await evaluateModel({
        loaded,
        config: em,
        model,
        guide,
        runner: services.sandbox(),
        out: args.out,
        force: args.force,
        promptsSha256: createHash("sha256").update(JSON.stringify(promptTexts())).digest("hex"),
        signal: controller.signal,
        log,
        batches: services.llmBatches?.(),
      });
      const m = report.metrics;
      process.stdout.write(
        `${args.benchmark} (${loaded.repo} @ ${loaded.commit.slice(0, 12)}): model ${model.model}, ` +
          `${em.feedback} feedback${guide ? ` by ${guide.model}` : ""}, at most ${em.rounds} round${em.rounds > 1 ? "s" : ""}\n`,
      );
      const { header, rows } = roundsTable(m);
      printTable(header, rows);
      const u = usage.totals;
      process.stdout.write(
        `${m.tasks} tasks${m.invalid_tasks ? `, ${m.invalid_tasks} invalid rows (see results.jsonl)` : ""}` +
          `${report.resumed ? `, ${report.resumed} kept from an earlier run` : ""}; ` +
          `LLM: ${u.requests} requests sent, ${u.cachedRequests} from the cache, $${u.costUsd.toFixed(4)}\n` +
          `results: ${report.resultsPath}\nmetrics: ${report.metricsPath}\n`,
      );
      if (controller.signal.aborted)
        throw new UserError("interrupted; rerun the same command to finish", { exitCode: 130 });
      if (report.failed.length > 0) {
        throw new UserError(
          `${report.failed.length} tasks could not be evaluated (first: ${report.failed[0]!.task_id}: ${report.failed[0]!.error}); ` +
            "rerun the same command to retry them (finished tasks are kept)",
          { exitCode: 1 },
        );
      }
    } finally {
      process.off("SIGINT", onSignal);
      await services.close();
    }
  },
};
