// The Runner: runs the stage graph: every stage named, plus (unless --only) every upstream stage that
// is not complete for the current configuration, or (`--shard K/N`) shard K of each named stage. A
// stale stage is recomputed from scratch, a partial one resumes where it stopped. Built by concern,
// each class over the one below: runner/plan.ts, status.ts, read.ts; one stage's run: execute.ts.
import { join } from "node:path";
import { diskFull, InterruptedError, UserError } from "./errors.js";
import { DEFAULT_BATCH_DISCOUNT } from "./llm/batch/config.js";
import type { ChatMessage, ChatOptions, LlmEstimator, RequestEstimate } from "./llm/types.js";
import type { PipelineRecord } from "./record.js";
import { runStage, type StageOutcome } from "./runner/execute.js";
import { type RunOptions, switchedOffReason } from "./runner/plan.js";
import { RunnerRead } from "./runner/read.js";
import { type ShardSpec, shardArg, shardTest } from "./runner/shard.js";
import { usable } from "./runner/status.js";
import type { Services } from "./services.js";
import type { CostEstimate, Stage } from "./stage.js";
import { listShards } from "./store/shard-dirs.js";
import { UsageMeter } from "./usage.js";

export type { StageOutcome } from "./runner/execute.js";
export type { RunnerOptions, RunOptions } from "./runner/plan.js";
export type { StageState, StageStatus } from "./runner/status.js";

export class Runner extends RunnerRead {
  /**
   * Runs `targets` in pipeline order, each skipped when up to date, reset first when forced or
   * stale, refused when an upstream is not complete or it is being run in shards, estimated instead
   * of run on --dry-run. `--shard K/N`: shard K of each named stage, and nothing else: upstream stages
   * must be complete (a shard never runs a stage that other shards would run too); each shard takes
   * only its own lock and writes only under `<stage>/shards/K-of-N/`.
   */
  async run(targets: string[], options: RunOptions = {}): Promise<StageOutcome[]> {
    const signal = options.signal ?? new AbortController().signal;
    const shard = options.shard;
    for (const name of shard ? targets : []) {
      if (this.switchedOff.has(name)) throw this.switchedOffError(name);
      if (this.stage(name).kind !== "record") {
        throw new UserError(
          `--shard ${shardArg(shard!)}: ${name} is a global stage; it runs in one process over the union of the shards. ` +
            `Run it without --shard (and outside a job array) once every shard upstream of it is complete.`,
        );
      }
    }
    const reports: StageOutcome[] = [];
    for (const stage of this.plan(targets, shard ? { only: true } : options)) {
      if (signal.aborted) {
        throw new InterruptedError(`interrupted before ${stage.name}; run the same command again to go on`);
      }
      if (!shard && this.switchedOff.has(stage.name)) {
        if (targets.includes(stage.name)) throw this.switchedOffError(stage.name);
        this.log.info(
          `${stage.name}: switched off (${switchedOffReason(stage.name)}); the stages after it go on without it`,
        );
        reports.push({ stage: stage.name, action: "skipped" });
        continue;
      }
      const store = this.store(stage.name, shard);
      const label = store.label;
      if (shard && this.checkShardLayout(stage, shard)) {
        this.log.info(`${label}: ${stage.name} is complete in one process; nothing to do`);
        reports.push({ stage: stage.name, action: "skipped" });
        continue;
      }
      // a dry run changes nothing: no forced recomputation, no reset of stale outputs before an estimate
      const forced = Boolean(options.force && !options.dryRun && (shard || targets.includes(stage.name)));
      // a shard's reset is its own files'; the stage's marks every stage downstream stale
      const reset = (reason?: string) => (shard ? store.reset() : this.resetHeld(stage.name, reason));
      const statusNow = () => (shard ? this.shardStatus(stage, shard) : this.status(stage.name));
      const release = store.lock();
      try {
        if (shard) this.checkShardLayout(stage, shard, true);
        if (forced) reset(`upstream ${stage.name} was forced`);
        let status = statusNow();
        // `--dry-run --force` of a complete stage: what its forced rerun would send (the cache counted)
        const estimateForced =
          options.dryRun && options.force && stage.estimate && targets.includes(stage.name);
        if ((status.state === "complete" || status.state === "done") && !estimateForced) {
          this.log.info(`${label}: up to date (${status.manifest!.counts.out} records)`);
          reports.push({ stage: stage.name, action: "skipped", counts: status.manifest!.counts });
          continue;
        }
        this.checkUpstream(stage, shard);
        if (options.dryRun && stage.estimate) {
          reports.push(await this.estimate(stage, signal, shard));
          break;
        }
        // stale shards are recomputed here like any stale stage; live or unfinished ones are not ours
        if ("shards" in status && status.shards && status.state !== "stale") {
          throw new UserError(
            `${stage.name} is being run in shards and is ${status.state}: ${status.reason}. ` +
              `Finish its shards, or run \`pnpm pipeline reset ${stage.name}\` to run it in one process instead.`,
          );
        }
        if (status.state === "stale") {
          this.log.info(`${label}: stale (${status.reason}); recomputing`);
          reset();
          status = statusNow();
        }
        // parts without a manifest are left by a reset killed half-way: they belong to no run
        if (status.state === "not started") store.reset();
        reports.push(
          await runStage(this, stage, status.manifest, signal, forced, shard).catch((error: unknown) => {
            throw diskFull(error, { name: store.label, dir: store.dir }) ?? error;
          }),
        );
      } finally {
        release();
      }
    }
    return reports;
  }

  private switchedOffError(name: string): UserError {
    return new UserError(
      `${name} is switched off (${switchedOffReason(name)} in ${this.loaded.source}); ` +
        `remove that key (or --set stages.${name}.enabled=true) to run it`,
    );
  }

  /** Refuses to run a stage while one of its upstream stages is not complete (or switched off). */
  private checkUpstream(stage: Stage<unknown>, shard?: ShardSpec): void {
    for (const upstream of stage.upstream) {
      const up = this.status(upstream);
      if (!usable(up)) {
        const advice = up.shards
          ? "Run the shards named above"
          : shard
            ? `Run \`pnpm pipeline run ${upstream}\` first (a shard runs only its own stage)`
            : `Run \`pnpm pipeline run ${stage.name}\` without --only to run it first`;
        throw new UserError(
          `stage ${stage.name} needs ${upstream} to be complete, but it is ${up.state}${up.reason ? ` (${up.reason})` : ""}. ${advice}.`,
        );
      }
    }
  }

  /**
   * Refuses a shard that would mix with what is there: outputs of a one-process run, or shards of
   * another N; warns (with `log`) of shards run with another configuration. True when a one-process
   * run completed the stage for this configuration already.
   */
  private checkShardLayout(stage: Stage<unknown>, shard: ShardSpec, log = false): boolean {
    const name = stage.name;
    const configHash = this.configHash(stage);
    if (this.store(name).manifest()) {
      const single = this.status(name);
      if (single.state === "complete") return true;
      throw new UserError(
        `${name} has outputs of a one-process run (${single.state}${single.reason ? `: ${single.reason}` : ""}), which shards cannot add to. ` +
          `Finish it with \`pnpm pipeline run ${name}\`, or run \`pnpm pipeline reset ${name}\` to start over in shards.`,
      );
    }
    const others = listShards(join(this.dataDir, name))
      .filter((spec) => spec.index !== shard.index || spec.count !== shard.count)
      .map((spec) => ({ spec, manifest: this.store(name, spec).manifest() }))
      .filter((s) => s.manifest !== undefined);
    const otherCount = others.find((s) => s.spec.count !== shard.count);
    if (otherCount) {
      const n = otherCount.spec.count;
      throw new UserError(
        `--shard ${shardArg(shard)}: ${name} was started in ${n} shards, not ${shard.count}, and records go to shards by N. ` +
          `Run its shards with --shard K/${n} (K from 0 to ${n - 1}), or run \`pnpm pipeline reset ${name}\` to start over in ${shard.count} shards.`,
      );
    }
    // Shards of another configuration are not refused: each shard's files are its own, so this one
    // starts over on its own files (when stale) and theirs stay as they are until they are run again.
    // The stage is complete, and readable by the stages after it, only once all N share one.
    const mixed = others.filter((s) => s.manifest!.configHash !== configHash);
    if (mixed.length > 0 && log) {
      const list = mixed.map((s) => s.spec.index).join(", ");
      this.log.warn(
        `${name} shard ${shardArg(shard)}: shard${mixed.length > 1 ? "s" : ""} ${list} ran with another configuration ` +
          `(hash ${mixed[0]!.manifest!.configHash.slice(0, 8)}, this one ${configHash.slice(0, 8)}); ${name} is complete only once ` +
          "every shard has run with the same one (the same config file, --set and --limit everywhere)",
      );
    }
    return false;
  }

  /**
   * `run --dry-run` for a stage that sends LLM requests: its own estimate of requests and tokens, priced
   * from the configured endpoints, logged and reported instead of a run (of one shard: its own records).
   */
  private async estimate(
    stage: Stage<unknown>,
    signal: AbortSignal,
    shard?: ShardSpec,
  ): Promise<StageOutcome> {
    const prices = watchPrices(this.options.services);
    const ctx = {
      ...this.context(stage, signal, new UsageMeter(), shard, undefined, true),
      services: prices.services,
    };
    // a record-wise stage's input as its run would take it (a global stage's estimate reads its own)
    const input = async function* (): AsyncGenerator<PipelineRecord> {
      if (stage.kind !== "record") return;
      const mine = shard ? shardTest(shard) : () => true;
      for await (const record of stage.input ? stage.input(ctx, undefined) : ctx.read(stage.upstream[0]!))
        if (mine(record)) yield record;
    };
    const estimate = await stage.estimate!(ctx, input());
    const cost = costText(estimate, prices.unpriced);
    this.log.info(
      `${this.store(stage.name, shard).label}: would send ${estimate.requests} requests, ~${estimate.promptTokens} prompt + ` +
        `~${estimate.completionTokens} completion tokens${cost}${estimate.note ? ` (${estimate.note})` : ""}`,
    );
    // the same requests side by side at the batch price (each role's `llm.<role>.batch.discount`)
    if (estimate.costUsd && estimate.requests > 0 && prices.unpriced.size === 0) {
      this.log.info(
        `${this.store(stage.name, shard).label}: in batch mode (llm.<role>.batch): ~$${(estimate.costUsd * prices.batchShare()).toFixed(2)} ` +
          `instead of ~$${estimate.costUsd.toFixed(2)} online`,
      );
    }
    return { stage: stage.name, action: "estimated", estimate };
  }
}

/**
 * `services` whose estimators note each role the stage asked for that has no price under
 * `llm.prices`: it costs 0 in the sums, and "~$0.00" would read as free.
 */
function watchPrices(services: Services): {
  services: Services;
  unpriced: Set<string>;
  batchShare(): number;
} {
  const unpriced = new Set<string>();
  // what the requests estimated cost online, and in batch mode (each role at its batch discount)
  let online = 0;
  let batch = 0;
  const batchShare = () => (online > 0 ? batch / online : DEFAULT_BATCH_DISCOUNT);
  const inner = services.llmEstimator;
  if (!inner) return { services, unpriced, batchShare };
  // the services object may rely on `this`; everything else stays as it was
  const watched: Services = Object.assign(Object.create(services) as Services, {
    llmEstimator(role: string): LlmEstimator {
      const estimator = inner.call(services, role);
      if (estimator.priced === false) unpriced.add(`${role} (${estimator.model})`);
      const discount = estimator.batchDiscount ?? DEFAULT_BATCH_DISCOUNT;
      return Object.assign(Object.create(estimator) as LlmEstimator, {
        estimate(messages: readonly ChatMessage[], options?: ChatOptions): RequestEstimate {
          const one = estimator.estimate(messages, options);
          online += one.costUsd;
          batch += one.costUsd * discount;
          return one;
        },
      });
    },
  });
  return { services: watched, unpriced, batchShare };
}

function costText(estimate: CostEstimate, unpriced: ReadonlySet<string>): string {
  if (estimate.costUsd === undefined) return "";
  if (unpriced.size === 0 || estimate.requests === 0) return `, ~$${estimate.costUsd.toFixed(2)}`;
  const roles = [...unpriced].join(", ");
  return estimate.costUsd > 0
    ? `, ~$${estimate.costUsd.toFixed(2)} plus what ${roles} costs (price unknown: add it under llm.prices)`
    : `, price unknown (no llm.prices entry for ${roles})`;
}
