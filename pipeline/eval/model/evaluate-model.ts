// `eval model` from loaded tasks to DIR/results.jsonl and DIR/metrics.json: finished tasks of an
// earlier run are kept, the others are evaluated (a few at once), each appended as it finishes.
// A task whose LLM call or sandbox run failed is listed under `failed_tasks` and evaluated again by
// the next run (paid answers come back from the cache); a dead server, `on_outage: stop` or a full
// disk stops the whole run instead, as in every stage.
import path from "node:path";
import { diskFull, UserError } from "../../errors.js";
import type { LlmBatches } from "../../llm/batch/rounds.js";
import type { LlmClient } from "../../llm/types.js";
import type { Logger } from "../../log.js";
import type { CodeRunner } from "../../sandbox/types.js";
import { writeJson } from "../jsonl.js";
import type { BenchmarkTask, LoadedBenchmark } from "./benchmarks.js";
import type { EvalModelConfig } from "./config.js";
import { computeModelMetrics, type ModelEvalMetrics } from "./metrics.js";
import { type ResultLine, ResultsFile, type RunIdentity } from "./results-file.js";
import { evaluateTask } from "./session.js";

export interface ModelEvalOptions {
  loaded: LoadedBenchmark;
  config: Pick<EvalModelConfig, "rounds" | "feedback" | "workers" | "fence" | "run_timeout_s" | "memory_mb">;
  model: LlmClient;
  /** the feedback role, for `human` and `oracle` */
  guide?: LlmClient | undefined;
  runner: CodeRunner;
  out: string;
  /** start over in `out` even if it holds another evaluation */
  force?: boolean;
  /** sha256 of the prompt texts (a changed prompt is another evaluation) */
  promptsSha256: string;
  signal?: AbortSignal | undefined;
  log: Logger;
  /** LLM roles in batch mode: their rounds, with the ledger under `out/batch/` */
  batches?: LlmBatches | undefined;
}

export interface ModelEvalReport {
  metrics: ModelEvalMetrics;
  /** tasks kept from an earlier run */
  resumed: number;
  failed: Array<{ task_id: string; error: string }>;
  resultsPath: string;
  metricsPath: string;
}

export async function evaluateModel(options: ModelEvalOptions): Promise<ModelEvalReport> {
  const { loaded, config } = options;
  const identity: RunIdentity = {
    benchmark: loaded.benchmark,
    repo: loaded.repo,
    commit: loaded.commit,
    model: options.model.model,
    feedback: config.feedback,
    rounds: config.rounds,
    feedback_model: config.feedback === "execution" ? null : (options.guide?.model ?? null),
    prompts_sha256: options.promptsSha256,
    fence: config.fence,
  };
  const results = await ResultsFile.open(options.out, identity, options.force ?? false);
  const resumed = results.done.size;
  for (const row of loaded.rows) {
    if (!("invalid" in row) || results.done.has(row.invalid.id)) continue;
    options.log.warn(`task ${row.invalid.id} is not usable: ${row.invalid.reason}`);
    await results.append([
      { task_id: row.invalid.id, round: 0, last: true, outcome: "invalid-task", reason: row.invalid.reason },
    ]);
  }
  const pending: BenchmarkTask[] = loaded.rows.flatMap((row) =>
    "task" in row && !results.done.has(row.task.id) ? [row.task] : [],
  );
  if (resumed > 0) options.log.info(`${options.out}: ${resumed} tasks done earlier, ${pending.length} to go`);

  const failed: ModelEvalReport["failed"] = [];
  let finished = 0;
  /** what stops the run (a dead server, `on_outage: stop`, a full disk): no task is failed for it */
  let stop: unknown;
  const evaluate = async (task: BenchmarkTask): Promise<void> => {
    try {
      const rounds = await evaluateTask(task, {
        benchmark: loaded.benchmark,
        rounds: config.rounds,
        feedback: config.feedback,
        fence: config.fence,
        model: options.model,
        guide: options.guide,
        runner: options.runner,
        judge: {
          runTimeoutS: config.run_timeout_s,
          ...(config.memory_mb !== undefined ? { memoryMb: config.memory_mb } : {}),
        },
        signal: options.signal,
      });
      await results.append(rounds);
    } catch (error) {
      if (options.signal?.aborted) return;
      const full = diskFull(error, { name: "eval model", dir: options.out });
      // a `files` round written (exit 3) is a UserError too: the run stops, no task failed
      if (error instanceof UserError || full) {
        stop ??= full ?? error;
        return;
      }
      const message = (error as Error).message;
      failed.push({ task_id: task.id, error: message });
      options.log.warn(`task ${task.id} not evaluated (rerun to retry): ${message}`);
    }
    finished++;
    if (finished % 25 === 0) options.log.info(`${finished}/${pending.length} tasks evaluated`);
  };

  // As the runner admits records: `workers` tasks at once, and in batch mode every task, so that all
  // those waiting on the same step (an answer, a guidance) go out as one round.
  const batches = options.batches;
  try {
    await batches?.begin(options.out, "eval model");
    const admit = () => (batches?.engaged ? Math.max(config.workers, batches.admit) : config.workers);
    const inflight = new Set<Promise<void>>();
    let wake: (() => void) | undefined;
    let feeding = true;
    batches?.watch({ busy: () => inflight.size, feeding: () => feeding, wake: () => wake?.() });
    for (const task of pending) {
      if (inflight.size >= admit()) {
        feeding = false;
        batches?.poke();
        while (inflight.size >= admit() && stop === undefined)
          await new Promise<void>((resolve) => (wake = resolve));
        feeding = true;
      }
      if (options.signal?.aborted || stop !== undefined) break;
      const running: Promise<void> = evaluate(task).finally(() => {
        inflight.delete(running);
        wake?.();
        batches?.poke();
      });
      inflight.add(running);
    }
    feeding = false;
    batches?.poke();
    await Promise.all(inflight);
  } finally {
    batches?.end();
  }
  if (stop !== undefined) throw stop;

  // Dataset order, whatever order the tasks finished in.
  const ordered: ResultLine[][] = [];
  for (const row of loaded.rows) {
    const lines = results.done.get("task" in row ? row.task.id : row.invalid.id);
    if (lines) ordered.push(lines);
  }
  const metrics = computeModelMetrics(ordered, config.rounds);
  const metricsPath = path.join(options.out, "metrics.json");
  writeJson(metricsPath, {
    benchmark: loaded.benchmark,
    dataset: { repo: loaded.repo, commit: loaded.commit, files: loaded.files },
    model: identity.model,
    feedback: identity.feedback,
    feedback_model: identity.feedback_model,
    max_rounds: config.rounds,
    ...metrics,
    failed_tasks: failed,
    interrupted: options.signal?.aborted ?? false,
  });
  return { metrics, resumed, failed, resultsPath: results.path, metricsPath };
}
