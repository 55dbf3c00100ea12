// Plans the stage graph and runs it: every stage named, plus (unless --only) every upstream stage that
// is not complete for the current configuration. A stage is stale when its own config (or fingerprint)
// changed, or an upstream's outputs changed since it ran; stale stages are recomputed from scratch,
// partial ones resume where they stopped.
import { mkdirSync } from "node:fs";
import { hostname } from "node:os";
import { join, resolve } from "node:path";
import type { LoadedConfig } from "./config/load.js";
import { validate } from "./config/load.js";
import type { RootConfig } from "./config/schema.js";
import { ConfigError, clause, InterruptedError, UserError } from "./errors.js";
import { hashOf } from "./hash.js";
import { createLogger, type Logger, silentLogger } from "./log.js";
import type { PipelineRecord } from "./record.js";
import { StageRegistry } from "./registry.js";
import { costText, watchPrices } from "./runner/estimate-cost.js";
import {
  type ExecutionResult,
  executeGlobalStage,
  executeRecordStage,
  type InputCheck,
} from "./runner/execute.js";
import { createProgress, formatDuration } from "./runner/progress.js";
import { type ShardSpec, shardArg, shardOfId } from "./runner/shard.js";
import { aggregateManifest, aggregateState, type ShardStatus } from "./runner/shard-status.js";
import { readSwitch, SWITCHED_OFF, switchedOffReason } from "./runner/switch.js";
import { type Services, stageServices } from "./services.js";
import type { CostEstimate, ReadOptions, Stage, StageContext } from "./stage.js";
import {
  isRunning,
  listShards,
  type Manifest,
  OutputDigest,
  StageStore,
  StoreError,
  Tally,
} from "./store/index.js";
import { describeEndpoints, UsageMeter } from "./usage.js";

export type StageState = "not started" | "running" | "partial" | "complete" | "stale" | "disabled";

export interface StageStatus {
  stage: string;
  state: StageState;
  /** why a stage is stale or partial */
  reason?: string;
  configHash: string;
  /** a one-process stage's manifest; for a sharded stage, the shards' manifests summed (shard-status.ts) */
  manifest?: Manifest;
  /** a stage run in shards: every shard 0..N-1, each with its state */
  shards?: ShardStatus[];
}

export interface RunOptions {
  only?: boolean;
  force?: boolean;
  dryRun?: boolean;
  signal?: AbortSignal;
  /** run only this shard of each named stage (record-wise stages only; implies --only) */
  shard?: ShardSpec;
}

export interface RunnerOptions {
  limit?: number;
  log?: Logger;
  /** built once per run, closed at the end */
  services: Services;
  progressStream?: NodeJS.WriteStream;
}

export interface StageReport {
  stage: string;
  action: "skipped" | "ran" | "estimated";
  counts?: Manifest["counts"];
  stats?: Record<string, unknown>;
  estimate?: CostEstimate;
  elapsedMs?: number;
}

export class Runner {
  readonly dataDir: string;
  private readonly byName: Map<string, Stage<unknown>>;
  private readonly log: Logger;
  private readonly configs = new Map<string, unknown>();
  /** stages switched off by `stages.<name>.enabled: false` */
  private readonly switchedOff = new Set<string>();
  /** the stage names and the dialogue methods each declares, handed to every stage as `ctx.registry` */
  readonly registry: StageRegistry;

  constructor(
    readonly stages: readonly Stage<unknown>[],
    readonly loaded: LoadedConfig,
    private readonly options: RunnerOptions,
  ) {
    this.byName = new Map(stages.map((s) => [s.name, s]));
    this.registry = new StageRegistry(stages);
    this.dataDir = resolve(loaded.config.data_dir);
    this.log = options.log ?? createLogger();
    for (const name of Object.keys(loaded.config.stages)) {
      if (!this.byName.has(name)) {
        throw new ConfigError(
          `${loaded.source}: stages.${name}: unknown stage. Stages are: ${stages.map((s) => s.name).join(", ")}`,
        );
      }
    }
    for (const stage of stages) this.configOf(stage);
  }

  get root(): RootConfig {
    return this.loaded.config;
  }

  stage(name: string): Stage<unknown> {
    const stage = this.byName.get(name);
    if (!stage) {
      throw new UserError(
        `unknown stage "${name}". Stages are: ${this.stages.map((s) => s.name).join(", ")}`,
      );
    }
    return stage;
  }

  store(name: string, shard?: ShardSpec): StageStore {
    return new StageStore(this.dataDir, name, shard);
  }

  /** A stage's committed outputs (or rejects): a sharded stage's are its shards', in shard order. */
  async *read(name: string, options: ReadOptions = {}): AsyncGenerator<PipelineRecord> {
    const status = this.status(name);
    // switched off: whatever an earlier run left on disk is not part of this configuration
    if (status.state === "disabled") return;
    if (!status.shards) {
      yield* this.store(name).read(options);
      return;
    }
    yield* mergeShards(status.shards.map((shard) => this.store(name, shard).readOrdered(options)));
  }

  /**
   * A stage's manifest as one: a one-process stage's own; a sharded stage's shards summed (counts,
   * usage, counters, reject reasons) with, once every shard is done, the summary of the whole stage
   * made by its `summarize` over the union (a shard's summary covers only its own records). What the
   * report and push read, never `<stage>/manifest.json` directly.
   */
  async manifestOf(name: string): Promise<Manifest | undefined> {
    const status = this.status(name);
    if (!status.shards || status.state !== "complete" || !status.manifest) return status.manifest;
    const stage = this.stage(name);
    if (!stage.summarize) return status.manifest;
    const whole = this.context(stage, new AbortController().signal, new UsageMeter(status.manifest.usage));
    const ctx: StageContext<unknown> = {
      ...whole,
      log: silentLogger,
      read: (from, options) => this.read(from, options),
      countOf: (from) => this.status(from).manifest?.counts.out,
    };
    const state = await stage.open?.(ctx);
    try {
      const { counters = {}, rejectReasons = {} } = status.manifest;
      return { ...status.manifest, stats: await stage.summarize(ctx, state, { counters, rejectReasons }) };
    } finally {
      await stage.close?.(state, ctx);
    }
  }

  configOf(stage: Stage<unknown>): unknown {
    if (!this.configs.has(stage.name)) {
      const { enabled, section: raw } = readSwitch(
        stage,
        this.loaded.config.stages[stage.name],
        this.loaded.source,
      );
      if (!enabled) this.switchedOff.add(stage.name);
      this.configs.set(
        stage.name,
        validate(
          stage.configSchema,
          raw ?? {},
          ["stages", stage.name],
          this.loaded.source,
          this.loaded.lines,
        ),
      );
    }
    return this.configs.get(stage.name);
  }

  configHash(stage: Stage<unknown>): string {
    const config = this.configOf(stage);
    const extra = stage.fingerprint?.({ config, root: this.root, limit: this.options.limit });
    return hashOf({ stage: stage.name, config, extra });
  }

  status(name: string): StageStatus {
    const stage = this.stage(name);
    const configHash = this.configHash(stage);
    if (this.switchedOff.has(name))
      return { stage: name, state: "disabled", reason: switchedOffReason(name), configHash };
    const manifest = this.store(name).manifest();
    if (!manifest) {
      const count = this.shardCount(name);
      if (count !== undefined) return this.shardedStatus(stage, configHash, count);
      return { stage: name, state: "not started", configHash };
    }
    const base = { stage: name, configHash, manifest };
    if (isRunning(manifest)) {
      return { ...base, state: "running", reason: `process ${manifest.pid}` };
    }
    const stale = this.staleness(stage, manifest, configHash);
    if (stale) return { ...base, state: "stale", reason: stale };
    if (manifest.state === "complete") {
      // damaged after it completed (its reader stops on it): `run` recomputes it like any stale stage
      const damage = this.store(name).damage(manifest);
      if (damage) {
        return { ...base, state: "stale", reason: `its parts were damaged after it completed: ${damage}` };
      }
      return { ...base, state: "complete" };
    }
    const reason =
      manifest.lastError ??
      (manifest.counts.failed > 0
        ? `${manifest.counts.failed} failed, retried on the next run`
        : "interrupted");
    return { ...base, state: "partial", reason };
  }

  private staleness(
    stage: Stage<unknown>,
    manifest: Manifest,
    configHash: string,
    statusOf: (name: string) => StageStatus = (name) => this.status(name),
  ): string | undefined {
    if (manifest.staleReason) return manifest.staleReason;
    if (manifest.configHash !== configHash) return "its configuration changed";
    for (const upstream of stage.upstream) {
      const up = statusOf(upstream);
      const was = manifest.upstream[upstream];
      if ((up.state === "disabled") !== (was === SWITCHED_OFF)) {
        return `upstream ${upstream} was switched ${up.state === "disabled" ? "off" : "on"}`;
      }
      if (up.state === "stale") return `upstream ${upstream} is stale`;
      if (!usable(up)) return `upstream ${upstream} is ${up.state}`;
      if (outputHashOf(up) !== was) return `upstream ${upstream} changed`;
    }
    return undefined;
  }

  /**
   * N of a stage run in shards: the count of the shards that have a manifest (a refused or just
   * started shard leaves only a lock). Of two counts (an N changed by hand) the one written last.
   */
  shardCount(name: string): number | undefined {
    let best: { count: number; at: string } | undefined;
    for (const spec of listShards(join(this.dataDir, name))) {
      const manifest = this.store(name, spec).manifest();
      if (manifest && (!best || manifest.updatedAt > best.at))
        best = { count: spec.count, at: manifest.updatedAt };
    }
    return best?.count;
  }

  /** The command that runs one shard, as `status` and refusals print it. */
  shardCommand(name: string, shard: ShardSpec): string {
    // the data dir too: a shard rerun elsewhere, or with --data-dir, must find the same files
    const config = this.loaded.source.startsWith("(") ? "" : ` --config ${shellWord(this.loaded.source)}`;
    const limit = this.options.limit !== undefined ? ` --limit ${this.options.limit}` : "";
    return `pnpm pipeline run ${name} --only --shard ${shardArg(shard)}${config} --data-dir ${shellWord(this.dataDir)}${limit}`;
  }

  /** One shard's state; `statusOf` answers for the upstream stages (computed once for all shards). */
  shardStatus(
    stage: Stage<unknown>,
    shard: ShardSpec,
    configHash = this.configHash(stage),
    statusOf: (name: string) => StageStatus = (name) => this.status(name),
  ): ShardStatus {
    const manifest = this.store(stage.name, shard).manifest();
    const base = { index: shard.index, count: shard.count };
    const command = this.shardCommand(stage.name, shard);
    if (!manifest) return { ...base, state: "not started", command };
    const where = `process ${manifest.pid}${manifest.host ? ` on ${manifest.host}` : ""}`;
    if (isRunning(manifest)) return { ...base, state: "running", reason: where, manifest };
    const ours = manifest.pid === process.pid && (manifest.host ?? hostname()) === hostname();
    if (manifest.state === "running" && !ours) {
      return { ...base, state: "failed", reason: `${where} died`, manifest, command };
    }
    const stale = this.staleness(stage, manifest, configHash, statusOf);
    if (stale) return { ...base, state: "stale", reason: stale, manifest, command };
    if (manifest.state === "complete") return { ...base, state: "done", manifest };
    const reason =
      manifest.lastError ??
      (manifest.counts.failed > 0 ? `${manifest.counts.failed} records failed` : "interrupted");
    return { ...base, state: "failed", reason, manifest, command };
  }

  private shardedStatus(stage: Stage<unknown>, configHash: string, count: number): StageStatus {
    const upstream = new Map(stage.upstream.map((u) => [u, this.status(u)]));
    const statusOf = (name: string) => upstream.get(name) ?? this.status(name);
    const shards: ShardStatus[] = [];
    for (let index = 0; index < count; index++) {
      shards.push(this.shardStatus(stage, { index, count }, configHash, statusOf));
    }
    const { state, reason } = aggregateState(shards, count);
    const manifest = aggregateManifest(stage.name, configHash, shards, state);
    return {
      stage: stage.name,
      state,
      configHash,
      shards,
      ...(reason ? { reason } : {}),
      ...(manifest ? { manifest } : {}),
    };
  }

  /** Stages to consider for `targets`, in pipeline order. */
  plan(targets: string[], options: { only?: boolean } = {}): Stage<unknown>[] {
    const wanted = new Set<string>();
    const visit = (name: string): void => {
      const stage = this.stage(name);
      if (wanted.has(name)) return;
      wanted.add(name);
      if (!options.only) for (const up of stage.upstream) visit(up);
    };
    for (const t of targets) visit(t);
    return this.stages.filter((s) => wanted.has(s.name));
  }

  async run(targets: string[], options: RunOptions = {}): Promise<StageReport[]> {
    if (options.shard) return this.runShard(targets, options.shard, options);
    const signal = options.signal ?? new AbortController().signal;
    const reports: StageReport[] = [];
    for (const stage of this.plan(targets, options)) {
      if (signal.aborted) {
        throw new InterruptedError(`interrupted before ${stage.name}; run the same command again to go on`);
      }
      if (this.switchedOff.has(stage.name)) {
        if (targets.includes(stage.name)) {
          throw new UserError(
            `${stage.name} is switched off (${switchedOffReason(stage.name)} in ${this.loaded.source}); ` +
              `remove that key (or --set stages.${stage.name}.enabled=true) to run it`,
          );
        }
        this.log.info(
          `${stage.name}: switched off (${switchedOffReason(stage.name)}); the stages after it go on without it`,
        );
        reports.push({ stage: stage.name, action: "skipped" });
        continue;
      }
      // a dry run changes nothing: no forced recomputation, no reset of stale outputs before an estimate
      const forced = Boolean(options.force && !options.dryRun && targets.includes(stage.name));
      const release = this.store(stage.name).lock();
      try {
        if (forced) this.resetHeld(stage.name, `upstream ${stage.name} was forced`);
        let status = this.status(stage.name);
        if (status.state === "complete") {
          this.log.info(`${stage.name}: up to date (${status.manifest!.counts.out} records)`);
          reports.push({ stage: stage.name, action: "skipped", counts: status.manifest!.counts });
          continue;
        }
        this.checkUpstream(stage);
        // stale shards are recomputed here like any stale stage; live or unfinished ones are not ours
        if (status.shards && status.state !== "stale") {
          throw new UserError(
            `${stage.name} is being run in shards and is ${status.state}: ${status.reason}. ` +
              `Finish its shards, or run \`pnpm pipeline reset ${stage.name}\` to run it in one process instead.`,
          );
        }
        if (options.dryRun && stage.estimate) {
          reports.push(await this.estimate(stage, signal));
          break;
        }
        if (status.state === "stale") {
          this.log.info(`${stage.name}: stale (${status.reason}); recomputing`);
          this.resetHeld(stage.name);
          status = this.status(stage.name);
        }
        // parts without a manifest are left by a reset killed half-way: they belong to no run
        if (status.state === "not started") this.store(stage.name).reset();
        reports.push(await this.runStage(stage, status, signal, forced));
      } finally {
        release();
      }
    }
    return reports;
  }

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
   * `run --shard K/N`: shard K of each named stage, and nothing else: upstream stages must be
   * complete (a shard never runs a stage that other shards would run too). Each shard takes only its
   * own lock and writes only under `<stage>/shards/K-of-N/`.
   */
  private async runShard(targets: string[], shard: ShardSpec, options: RunOptions): Promise<StageReport[]> {
    const signal = options.signal ?? new AbortController().signal;
    const arg = shardArg(shard);
    for (const name of targets) {
      if (this.switchedOff.has(name)) {
        throw new UserError(
          `${name} is switched off (${switchedOffReason(name)} in ${this.loaded.source}); ` +
            `remove that key (or --set stages.${name}.enabled=true) to run it`,
        );
      }
      if (this.stage(name).kind !== "record") {
        throw new UserError(
          `--shard ${arg}: ${name} is a global stage; it runs in one process over the union of the shards. ` +
            `Run it without --shard (and outside a job array) once every shard upstream of it is complete.`,
        );
      }
    }
    const reports: StageReport[] = [];
    for (const stage of this.plan(targets, { only: true })) {
      if (signal.aborted) {
        throw new InterruptedError(`interrupted before ${stage.name}; run the same command again to go on`);
      }
      const label = `${stage.name} shard ${arg}`;
      if (this.checkShardLayout(stage, shard)) {
        this.log.info(`${label}: ${stage.name} is complete in one process; nothing to do`);
        reports.push({ stage: stage.name, action: "skipped" });
        continue;
      }
      const store = this.store(stage.name, shard);
      const release = store.lock();
      try {
        this.checkShardLayout(stage, shard);
        const forced = Boolean(options.force && !options.dryRun);
        if (forced) store.reset();
        let status = this.shardStatus(stage, shard);
        if (status.state === "done") {
          this.log.info(`${label}: up to date (${status.manifest!.counts.out} records)`);
          reports.push({ stage: stage.name, action: "skipped", counts: status.manifest!.counts });
          continue;
        }
        this.checkUpstream(stage, shard);
        if (options.dryRun && stage.estimate) {
          reports.push(await this.estimate(stage, signal, shard));
          break;
        }
        if (status.state === "stale") {
          this.log.info(`${label}: stale (${status.reason}); recomputing`);
          store.reset();
          status = this.shardStatus(stage, shard);
        }
        if (status.state === "not started") store.reset();
        const configHash = this.configHash(stage);
        const previous = status.manifest ? { manifest: status.manifest } : {};
        reports.push(
          await this.runStage(
            stage,
            { stage: stage.name, state: "partial", configHash, ...previous },
            signal,
            forced,
            shard,
          ),
        );
      } finally {
        release();
      }
    }
    return reports;
  }

  /**
   * Refuses a shard that would mix with what is there: outputs of a one-process run, shards of
   * another N, or shards run with another configuration. True when a one-process run completed the
   * stage for this configuration already.
   */
  private checkShardLayout(stage: Stage<unknown>, shard: ShardSpec): boolean {
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
    const mixed = others.filter((s) => s.manifest!.configHash !== configHash);
    if (mixed.length > 0) {
      const theirs = mixed[0]!.manifest!.configHash;
      throw new UserError(
        `--shard ${shardArg(shard)}: shard${mixed.length > 1 ? "s" : ""} ${mixed.map((s) => s.spec.index).join(", ")} of ${name} ran with another ` +
          `configuration (hash ${theirs.slice(0, 8)}) than this one (${configHash.slice(0, 8)}); all shards of a stage must share one. ` +
          `Give every machine the same config file, --set and --limit, or run \`pnpm pipeline reset ${name}\` to start over with this configuration.`,
      );
    }
    return false;
  }

  private async estimate(
    stage: Stage<unknown>,
    signal: AbortSignal,
    shard?: ShardSpec,
  ): Promise<StageReport> {
    const prices = watchPrices(this.options.services);
    const ctx = { ...this.context(stage, signal, new UsageMeter(), shard), services: prices.services };
    const estimate = await stage.estimate!(ctx);
    const cost = costText(estimate, prices.unpriced);
    this.log.info(
      `${stage.name}: would send ${estimate.requests} requests, ~${estimate.promptTokens} prompt + ` +
        `~${estimate.completionTokens} completion tokens${cost}${estimate.note ? ` (${estimate.note})` : ""}`,
    );
    return { stage: stage.name, action: "estimated", estimate };
  }

  private context(
    stage: Stage<unknown>,
    signal: AbortSignal,
    usage: UsageMeter,
    shard?: ShardSpec,
    tally = new Tally(),
  ): StageContext<unknown> {
    const store = this.store(stage.name, shard);
    // Every stage may keep private files; having the dir there is part of the contract.
    mkdirSync(store.workDir, { recursive: true });
    return {
      name: stage.name,
      config: this.configOf(stage),
      root: this.root,
      dataDir: this.dataDir,
      workDir: store.workDir,
      limit: this.options.limit,
      signal,
      log: createLogger(stage.name),
      services: stageServices(this.options.services, usage),
      usage,
      read: (name, opts) => {
        // upstream stages are checked complete before a stage starts; anything else would bypass staleness
        if (name !== stage.name && !stage.upstream.includes(name)) {
          throw new Error(`stage ${stage.name} read stage ${name}, which is not one of its upstream stages`);
        }
        // a shard reads its own outputs, and the whole of its upstream stages
        return name === stage.name ? store.read(opts) : this.read(name, opts);
      },
      countOf: (name) =>
        name === stage.name ? store.manifest()?.counts.out : this.status(name).manifest?.counts.out,
      // outside a record (record-wise stages count each record's with it: execute.ts)
      stat: (name, value = 1) => tally.add(tally.counters, name, value),
      registry: this.registry,
    };
  }

  /** Runs one stage whose lock the caller holds. */
  private async runStage(
    stage: Stage<unknown>,
    status: StageStatus,
    signal: AbortSignal,
    forced: boolean,
    shard?: ShardSpec,
  ): Promise<StageReport> {
    const store = this.store(stage.name, shard);
    const label = store.label;
    const previous = status.manifest;
    const usage = new UsageMeter(previous?.usage);
    const started = Date.now();
    const now = new Date().toISOString();
    const manifest: Manifest = {
      version: 1,
      stage: stage.name,
      state: "running",
      configHash: status.configHash,
      upstream: Object.fromEntries(stage.upstream.map((u) => [u, outputHashOf(this.status(u))])),
      counts: previous?.counts ?? { in: 0, out: 0, rejected: 0, failed: 0 },
      usage: usage.totals,
      runs: (previous?.runs ?? 0) + 1,
      pid: process.pid,
      host: hostname(),
      ...(shard ? { shard: { index: shard.index, count: shard.count } } : {}),
      startedAt: previous?.startedAt ?? now,
      updatedAt: now,
      elapsedMs: previous?.elapsedMs ?? 0,
      ...(previous?.inputCheck ? { inputCheck: previous.inputCheck } : {}),
    };
    store.saveManifest(manifest);
    const tally = new Tally();
    const ctx = this.context(stage, signal, usage, shard, tally);
    const elapsed = () => manifest.elapsedMs + (Date.now() - started);
    let counts = manifest.counts;
    const partial = (lastError?: string) =>
      store.saveManifest({
        ...manifest,
        state: "partial",
        counts,
        usage: usage.totals,
        elapsedMs: elapsed(),
        pid: undefined,
        ...(lastError ? { lastError } : {}),
      });
    const again = forced ? "Run the same command again without --force" : "Run the same command again";
    let result: ExecutionResult;
    let state: unknown;
    let opened = false;
    try {
      state = await stage.open?.(ctx);
      opened = true;
      const progress = createProgress(label, {
        total: shard ? undefined : this.progressTotal(stage, ctx),
        ...(this.options.progressStream ? { stream: this.options.progressStream } : {}),
      });
      if (stage.kind === "record" && stage.inputSize && !shard) progress.setTotal(await stage.inputSize(ctx));
      const hooks = {
        progress,
        tally,
        checkpoint: (now: Manifest["counts"], input?: InputCheck) => {
          counts = now;
          if (input) manifest.inputCheck = input;
          store.saveManifest({ ...manifest, counts, usage: usage.totals, elapsedMs: elapsed() });
        },
        ...(previous?.inputCheck ? { previousInput: previous.inputCheck } : {}),
        ...(shard
          ? {
              keep: (record: PipelineRecord) => shardOfId(record.id, shard.count) === shard.index,
              forceCommand: `${this.shardCommand(stage.name, shard)} --force`,
            }
          : {}),
      };
      result =
        stage.kind === "record"
          ? await executeRecordStage(stage, ctx, state, store, hooks)
          : await executeGlobalStage(stage, ctx, state, store, hooks, new OutputDigest());
      counts = result.counts;
      if (!result.interrupted && result.counts.failed === 0) {
        result.stats ??= await stage.summarize?.(ctx, state, tally);
      }
    } catch (error) {
      partial((error as Error)?.message ?? String(error));
      throw error;
    } finally {
      if (opened) await stage.close?.(state, ctx);
    }
    if (result.interrupted) {
      partial();
      throw new InterruptedError(
        `interrupted: ${label} saved ${result.counts.in} records so far. ${again} to resume where it stopped.`,
      );
    }
    if (result.counts.failed > 0) {
      const reasons = [...result.failures]
        .map(([reason, f]) => `${f.count} x ${reason}${f.example ? ` (e.g. ${clause(f.example)})` : ""}`)
        .join("; ");
      partial(`${result.counts.failed} records failed: ${reasons}`);
      throw new UserError(
        `${label}: ${result.counts.failed} records failed: ${reasons}. The other ${result.counts.in} are saved; ` +
          `${again.charAt(0).toLowerCase()}${again.slice(1)} to retry the failed ones.`,
        { exitCode: 1 },
      );
    }
    const complete: Manifest = {
      ...manifest,
      state: "complete",
      counts: result.counts,
      usage: usage.totals,
      elapsedMs: elapsed(),
      pid: undefined,
      outputHash: result.outputHash,
      finishedAt: new Date().toISOString(),
      ...(result.stats ? { stats: result.stats } : {}),
      ...tally.saved(),
    };
    store.saveManifest(complete);
    this.log.info(
      `${label}: complete: ${result.counts.in} in, ${result.counts.out} out, ${result.counts.rejected} rejected (${formatDuration(Date.now() - started)})`,
    );
    for (const line of describeEndpoints(usage.totals)) this.log.info(`${label}: ${line}`);
    return {
      stage: stage.name,
      action: "ran",
      counts: result.counts,
      stats: complete.stats,
      elapsedMs: Date.now() - started,
    };
  }

  /** Records to expect, for the progress bar: the upstream's output count when that is the input. */
  private progressTotal(stage: Stage<unknown>, ctx: StageContext<unknown>): number | undefined {
    if (stage.kind === "record" && !stage.input) return ctx.countOf(stage.upstream[0]!);
    return undefined;
  }

  /**
   * Removes a stage's outputs and marks every stage downstream of it stale. Refuses while the stage
   * or anything downstream of it is being run by another process.
   */
  reset(name: string, reason = `upstream ${name} was reset`, options: { purge?: boolean } = {}): void {
    this.stage(name);
    const release = this.store(name).lock();
    try {
      // shards take only their own locks: a live one is seen in its manifest
      const own = this.statusForReset(name);
      if (own?.state === "running" && this.shardCount(name) !== undefined) {
        throw new UserError(`cannot reset ${name} while its shards are running: ${own.reason}`);
      }
      for (const down of this.downstreamOf(name)) {
        const status = this.statusForReset(down);
        if (status?.state === "running") {
          throw new UserError(
            `cannot reset ${name} while ${down} (downstream) is being run by ${status.reason}`,
          );
        }
      }
      this.resetHeld(name, reason, options);
    } finally {
      release();
    }
  }

  /** `reset` for a caller that holds the stage's lock. */
  private resetHeld(
    name: string,
    reason = `upstream ${name} was reset`,
    options: { purge?: boolean } = {},
  ): void {
    this.store(name).reset(options);
    for (const down of this.downstreamOf(name)) {
      const shards = listShards(join(this.dataDir, down)).map((shard) => this.store(down, shard));
      for (const store of [this.store(down), ...shards]) {
        // an unreadable downstream manifest cannot be marked; its own reset is what its error advises
        const manifest = readableOrUndefined(() => store.manifest());
        if (manifest && !manifest.staleReason) store.saveManifest({ ...manifest, staleReason: reason });
      }
    }
  }

  /**
   * A downstream stage's status as far as its manifests can be read: reset is the advice for an
   * unreadable manifest, so it must not fail on one (the stage's own, read for staleness, included).
   * An unreadable stage still counts as running while a live process holds its manifest.
   */
  private statusForReset(name: string): Pick<StageStatus, "state" | "reason"> | undefined {
    try {
      return this.status(name);
    } catch (error) {
      if (!(error instanceof StoreError)) throw error;
      const manifest = readableOrUndefined(() => this.store(name).manifest());
      return manifest && isRunning(manifest)
        ? { state: "running", reason: `process ${manifest.pid}` }
        : undefined;
    }
  }

  downstreamOf(name: string): string[] {
    const result = new Set<string>();
    let grew = true;
    while (grew) {
      grew = false;
      for (const s of this.stages) {
        if (result.has(s.name)) continue;
        if (s.upstream.some((u) => u === name || result.has(u))) {
          result.add(s.name);
          grew = true;
        }
      }
    }
    return [...result];
  }
}

/** `read()`, or undefined where the store says its file is damaged. */
function readableOrUndefined<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch (error) {
    if (error instanceof StoreError) return undefined;
    throw error;
  }
}

/** A path as one shell word: quoted only when it needs to be. */
function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}

/**
 * The shards' entries in the order of their position in the whole input: one process's order for a
 * stage that commits in input order (normalize, one record at a time, which dedup's first-copy rule
 * relies on); a deterministic order in any case. One entry per shard is held.
 */
async function* mergeShards(
  shards: AsyncGenerator<{ at: number; items: PipelineRecord[] }>[],
): AsyncGenerator<PipelineRecord> {
  const heads = await Promise.all(shards.map((s) => s.next()));
  for (;;) {
    let pick = -1;
    for (let i = 0; i < heads.length; i++) {
      const head = heads[i]!;
      if (!head.done && (pick < 0 || head.value.at < (heads[pick]!.value as { at: number }).at)) pick = i;
    }
    if (pick < 0) return;
    yield* (heads[pick]!.value as { items: PipelineRecord[] }).items;
    heads[pick] = await shards[pick]!.next();
  }
}

/** An upstream a stage can read: complete, or switched off (it then reads nothing of it). */
function usable(status: StageStatus): boolean {
  return status.state === "complete" || status.state === "disabled";
}

/** What a stage records of an upstream it read, to see later whether that upstream changed. */
function outputHashOf(status: StageStatus): string {
  return status.state === "disabled" ? SWITCHED_OFF : (status.manifest?.outputHash ?? "");
}
