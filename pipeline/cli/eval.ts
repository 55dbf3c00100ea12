// `pnpm pipeline eval <generate|run|autoeval|oj|model>`: BabelCode-style evaluation and SandboxFusion's
// AutoEval and CommonOJ dataset types, through the sandbox. Parse, call, print.
import type { Argv, CommandModule } from "yargs";
import { canonicalLanguage } from "../code/languages.js";
import { loadConfig } from "../config/load.js";
import { UserError } from "../errors.js";
import { runAutoEval } from "../eval/autoeval.js";
import { runCommonOJ } from "../eval/common-oj.js";
import { type EvaluationRun, evaluateAnswers, evaluatePredictions, type RunHooks } from "../eval/evaluate.js";
import {
  indexProblems,
  parseAutoEvalProblem,
  parseCommonOJProblem,
  parseFusionAnswers,
} from "../eval/fusion-data.js";
import { generateTestDir, readTestDir } from "../eval/generate.js";
import { readJsonl } from "../eval/jsonl.js";
import { computeMetrics } from "../eval/metrics.js";
import { parseKs } from "../eval/pass-at-k.js";
import { readPredictions } from "../eval/predictions.js";
import type { RunLimits } from "../eval/raw-result.js";
import { ProgressBar, summaryTable, writeEvalOutputs } from "../eval/report.js";
import { programsAtOnce } from "../execution/settings.js";
import { createLogger } from "../log.js";
import { createCodeRunner, learnServerWorkers, type SandboxConfig } from "../sandbox/index.js";
import type { CodeRunner } from "../sandbox/types.js";
import { modelCommand } from "./eval-model.js";
import { printTable } from "./table.js";

interface RunOptions {
  out: string;
  config?: string;
  set?: string[];
  k?: string;
  workers?: number;
  "run-timeout"?: number;
  "compile-timeout"?: number;
  memory?: number;
}

function withRunOptions<T>(yargs: Argv<T>): Argv<T & RunOptions> {
  return yargs
    .option("out", {
      type: "string",
      demandOption: true,
      describe: "directory for results.jsonl and metrics.json",
    })
    .option("config", {
      type: "string",
      describe: "YAML config whose `eval:` and `sandbox:` sections to use (default: built-in)",
    })
    .option("set", {
      type: "string",
      array: true,
      describe: "override a config key, e.g. --set eval.ks=[1,5] (repeatable)",
    })
    .option("k", { type: "string", describe: "pass@k values, comma-separated (default: eval.ks, 1,10,100)" })
    .option("workers", {
      type: "number",
      describe: "predictions run at once (default: eval.workers, else sandbox.workers, else cores)",
    })
    .option("run-timeout", {
      type: "number",
      describe: "seconds per run (default: eval.run_timeout_s, else the sandbox's)",
    })
    .option("compile-timeout", {
      type: "number",
      describe: "seconds per compile (default: eval.compile_timeout_s, else the sandbox's)",
    })
    .option("memory", {
      type: "number",
      describe: "MiB per run (default: eval.memory_mb, else the sandbox's)",
    }) as Argv<T & RunOptions>;
}

interface Setup {
  config: SandboxConfig;
  ks: number[];
  workers: number;
  limits: RunLimits;
}

/**
 * The config file's `eval:` and `sandbox:` sections with the flags laid over them; with sandbox.url
 * and no workers anywhere, as many predictions at once as twice the servers' workers.
 */
async function setUp(args: RunOptions): Promise<Setup> {
  const { config } = loadConfig({ ...(args.config ? { file: args.config } : {}), sets: args.set ?? [] });
  let ks = config.eval.ks;
  if (args.k !== undefined) {
    try {
      ks = parseKs(args.k);
    } catch (error) {
      throw new UserError(`--k: ${(error as Error).message}`);
    }
  }
  if (args.workers !== undefined && (!Number.isInteger(args.workers) || args.workers < 1)) {
    throw new UserError(`--workers must be a positive integer, got ${args.workers}`);
  }
  const sandbox = config.sandbox;
  const setting = args.workers ?? config.eval.workers;
  if (setting === undefined) await learnServerWorkers(sandbox, createLogger("eval"));
  const workers = programsAtOnce(setting, config);
  // A remote server runs its own commands, which the language table cannot vouch for.
  const limits: RunLimits = { recordCommands: sandbox.url === undefined };
  const compileTimeoutS = args["compile-timeout"] ?? config.eval.compile_timeout_s;
  const runTimeoutS = args["run-timeout"] ?? config.eval.run_timeout_s;
  const memoryMb = args.memory ?? config.eval.memory_mb;
  if (compileTimeoutS !== undefined) limits.compileTimeoutS = compileTimeoutS;
  if (runTimeoutS !== undefined) limits.runTimeoutS = runTimeoutS;
  if (memoryMb !== undefined) limits.memoryMb = memoryMb;
  return { config: { ...sandbox, workers: Math.max(workers, sandbox.workers ?? 0) }, ks, workers, limits };
}

/**
 * Runs `evaluate` on a sandbox runner with a progress bar, writes the outputs and prints the
 * summary table: every eval subcommand that runs code goes through here.
 */
async function evaluateInto(
  out: string,
  setup: Setup,
  info: Record<string, unknown>,
  evaluate: (runner: CodeRunner, hooks: RunHooks) => Promise<EvaluationRun>,
): Promise<void> {
  const runner = createCodeRunner(setup.config);
  try {
    const progress = new ProgressBar(0);
    const { results, unmatched } = await evaluate(runner, {
      concurrency: setup.workers,
      onStart: (n) => progress.start(n),
      onResult: (r) => progress.tick(r),
    });
    const metrics = computeMetrics(results, setup.ks);
    const { signal: _, ...limits } = setup.limits;
    const settings = { workers: setup.workers, ...limits };
    writeEvalOutputs(out, results, { metrics, unmatched, info: { ...info, settings } });
    const { header, rows } = summaryTable(metrics);
    printTable(header, rows);
    if (unmatched.length > 0) {
      const first = unmatched[0]!;
      process.stderr.write(
        `warning: ${unmatched.length} predictions have no question to run against and were skipped (first: question ${first.qid}${first.language ? ` in ${first.language}` : ""}); they are listed under "unmatched" in metrics.json\n`,
      );
    }
    process.stdout.write(`results: ${out}/results.jsonl\nmetrics: ${out}/metrics.json\n`);
  } finally {
    await runner.close();
  }
}

const generate: CommandModule<object, { questions: string; out: string; languages?: string }> = {
  command: "generate",
  describe: "write test programs for BabelCode questions, one JSONL file per language",
  builder: (y) =>
    y
      .option("questions", {
        type: "string",
        demandOption: true,
        describe: "questions JSONL (BabelCode format)",
      })
      .option("out", { type: "string", demandOption: true, describe: "directory for the test programs" })
      .option("languages", {
        type: "string",
        describe: "comma-separated languages (default: every language the sandbox runs)",
      }),
  handler: async (args) => {
    const languages = args.languages
      ?.split(",")
      .map((l) => l.trim())
      .filter(Boolean)
      .map((l) => canonicalLanguage(l) ?? l);
    const result = await generateTestDir(args.questions, args.out, languages);
    // One row per language: programs written, questions not generated and the first reason why.
    const rows = new Map<string, { programs: number; failed: number; reason: string }>();
    const row = (language: string) => {
      const found = rows.get(language) ?? { programs: 0, failed: 0, reason: "" };
      rows.set(language, found);
      return found;
    };
    for (const test of result.tests) row(test.language).programs++;
    for (const failure of result.failures) {
      const entry = row(failure.language);
      entry.failed++;
      entry.reason ||= `${failure.qid}: ${failure.reason}`;
    }
    printTable(
      ["language", "programs", "not generated", "first reason"],
      [...rows].map(([language, r]) => [language, r.programs, r.failed, r.reason.slice(0, 100)]),
    );
    process.stdout.write(
      `${result.tests.length} programs for ${result.questions.length} questions in ${args.out}\n`,
    );
    if (result.failures.length > 0) {
      process.stdout.write(
        `${result.failures.length} not generated; every reason is in ${args.out}/failures.jsonl\n`,
      );
    }
  },
};

const run: CommandModule<object, RunOptions & { predictions: string; tests: string }> = {
  command: "run",
  describe: "run predictions against generated test programs in the sandbox; write results and pass@k",
  builder: (y) =>
    withRunOptions(
      y
        .option("predictions", { type: "string", demandOption: true, describe: "predictions JSONL" })
        .option("tests", {
          type: "string",
          demandOption: true,
          describe: "directory written by `eval generate`",
        }),
    ),
  handler: async (args) => {
    const setup = await setUp(args);
    const predictions = await readPredictions(args.predictions);
    const tests = await readTestDir(args.tests);
    await evaluateInto(
      args.out,
      setup,
      { predictions_file: args.predictions, tests_dir: args.tests },
      (runner, hooks) => evaluatePredictions(runner, predictions, tests, { ...setup.limits, ...hooks }),
    );
  },
};

interface FusionArgs extends RunOptions {
  dataset: string;
  predictions: string;
}

function withFusionOptions<T>(yargs: Argv<T>): Argv<T & FusionArgs> {
  return withRunOptions(
    yargs
      .option("dataset", {
        type: "string",
        demandOption: true,
        describe: "dataset rows JSONL (SandboxFusion format)",
      })
      .option("predictions", {
        type: "string",
        demandOption: true,
        describe: "answers JSONL: {id, completion | code, language?, sample_id?}",
      }),
  ) as Argv<T & FusionArgs>;
}

const autoeval: CommandModule<object, FusionArgs> = {
  command: "autoeval",
  describe: "AutoEval: the answer's code with the row's test code appended, run in the execution language",
  builder: (y) => withFusionOptions(y),
  handler: async (args) => {
    const setup = await setUp(args);
    const problems = indexProblems(await readJsonl(args.dataset), parseAutoEvalProblem, args.dataset);
    const answers = parseFusionAnswers(await readJsonl(args.predictions), args.predictions);
    await evaluateInto(args.out, setup, { dataset: args.dataset, type: "AutoEval" }, (runner, hooks) =>
      evaluateAnswers(problems, answers, (p, a) => runAutoEval(runner, p, a, setup.limits), hooks),
    );
  },
};

const oj: CommandModule<
  object,
  FusionArgs & { language?: string; "case-sensitive": boolean; "all-cases": boolean }
> = {
  command: "oj",
  describe: "CommonOJ: complete programs judged on stdin/stdout cases by SandboxFusion's rules",
  builder: (y) =>
    withFusionOptions(y)
      .option("language", { type: "string", describe: "language of answers that name none (else labels)" })
      .option("case-sensitive", { type: "boolean", default: false, describe: "compare letters exactly" })
      .option("all-cases", {
        type: "boolean",
        default: false,
        describe: "run every case, not up to the first failure",
      }),
  handler: async (args) => {
    const setup = await setUp(args);
    const language = args.language === undefined ? undefined : canonicalLanguage(args.language);
    if (args.language !== undefined && !language)
      throw new UserError(`--language: unknown language "${args.language}"`);
    const problems = indexProblems(await readJsonl(args.dataset), parseCommonOJProblem, args.dataset);
    const answers = parseFusionAnswers(await readJsonl(args.predictions), args.predictions);
    const options = {
      ...setup.limits,
      caseSensitive: args["case-sensitive"],
      runAllCases: args["all-cases"],
      ...(language ? { language } : {}),
    };
    await evaluateInto(args.out, setup, { dataset: args.dataset, type: "CommonOJ" }, (runner, hooks) =>
      evaluateAnswers(problems, answers, (p, a) => runCommonOJ(runner, p, a, options), hooks),
    );
  },
};

export const evalCommand: CommandModule = {
  command: "eval <command>",
  describe:
    "evaluate code: BabelCode test generation and runs, AutoEval, CommonOJ; a model on HumanEval/MBPP",
  builder: (y) =>
    y
      .command(generate as unknown as CommandModule)
      .command(run as unknown as CommandModule)
      .command(autoeval as unknown as CommandModule)
      .command(oj as unknown as CommandModule)
      .command(modelCommand as unknown as CommandModule)
      .demandCommand(1, "name an eval command: generate, run, autoeval, oj or model"),
  handler: () => {},
};
