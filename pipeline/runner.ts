// Plans the stage graph and runs it: every stage named, plus (unless --only) every upstream stage that
// is not complete for the current configuration. A stage is stale when its own config (or fingerprint)
// changed, or an upstream's outputs changed since it ran; stale stages are recomputed from scratch,
// partial ones resume where they stopped.
import { join, resolve } from "node:path";
import type { LoadedConfig } from "./config/load.js";
import { validate } from "./config/load.js";
import type { RootConfig } from "./config/schema.js";
import { ConfigError, InterruptedError, UserError } from "./errors.js";
import { hashOf } from "./hash.js";
import { createLogger, type Logger } from "./log.js";
import { type ExecutionResult, executeGlobalStage, executeRecordStage } from "./runner/execute.js";
import { createProgress, formatDuration } from "./runner/progress.js";
import type { Services } from "./services.js";
import type { CostEstimate, Stage, StageContext } from "./stage.js";
import { isAlive, type Manifest, OutputDigest, StageStore } from "./store/index.js";
import { UsageMeter } from "./usage.js";

export type StageState = "not started" | "running" | "partial" | "complete" | "stale";

export interface StageStatus {
  stage: string;
  state: StageState;
  /** why a stage is stale or partial */
  reason?: string;
  configHash: string;
  manifest?: Manifest;
}

export interface RunOptions {
  only?: boolean;
  force?: boolean;
  dryRun?: boolean;
  signal?: AbortSignal;
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

  constructor(
    readonly stages: readonly Stage<unknown>[],
    readonly loaded: LoadedConfig,
    private readonly options: RunnerOptions,
  ) {
    this.byName = new Map(stages.map((s) => [s.name, s]));
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

  store(name: string): StageStore {
    return new StageStore(this.dataDir, name);
  }

  configOf(stage: Stage<unknown>): unknown {
    if (!this.configs.has(stage.name)) {
      const raw = this.loaded.config.stages[stage.name];
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
    const manifest = this.store(name).manifest();
    if (!manifest) return { stage: name, state: "not started", configHash };
    const base = { stage: name, configHash, manifest };
    if (
      manifest.state === "running" &&
      manifest.pid &&
      manifest.pid !== process.pid &&
      isAlive(manifest.pid)
    ) {
      return { ...base, state: "running", reason: `process ${manifest.pid}` };
    }
    const stale = this.staleness(stage, manifest, configHash);
    if (stale) return { ...base, state: "stale", reason: stale };
    if (manifest.state === "complete") return { ...base, state: "complete" };
    const reason =
      manifest.counts.failed > 0
        ? `${manifest.counts.failed} failed, retried on the next run`
        : "interrupted";
    return { ...base, state: "partial", reason };
  }

  private staleness(stage: Stage<unknown>, manifest: Manifest, configHash: string): string | undefined {
    if (manifest.staleReason) return manifest.staleReason;
    if (manifest.configHash !== configHash) return "its configuration changed";
    for (const upstream of stage.upstream) {
      const up = this.status(upstream);
      if (up.state === "stale") return `upstream ${upstream} is stale`;
      if (up.state !== "complete") return `upstream ${upstream} is ${up.state}`;
      if (up.manifest?.outputHash !== manifest.upstream[upstream]) return `upstream ${upstream} changed`;
    }
    return undefined;
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
    const signal = options.signal ?? new AbortController().signal;
    const reports: StageReport[] = [];
    for (const stage of this.plan(targets, options)) {
      if (signal.aborted) break;
      if (options.force && targets.includes(stage.name))
        this.reset(stage.name, `upstream ${stage.name} was forced`);
      let status = this.status(stage.name);
      if (status.state === "running") {
        throw new UserError(`stage ${stage.name} is being run by ${status.reason}; wait for it to finish`);
      }
      if (status.state === "complete") {
        this.log.info(`${stage.name}: up to date (${status.manifest!.counts.out} records)`);
        reports.push({ stage: stage.name, action: "skipped", counts: status.manifest!.counts });
        continue;
      }
      if (status.state === "stale") {
        this.log.info(`${stage.name}: stale (${status.reason}); recomputing`);
        this.reset(stage.name);
        status = this.status(stage.name);
      }
      for (const upstream of stage.upstream) {
        const up = this.status(upstream);
        if (up.state !== "complete") {
          throw new UserError(
            `stage ${stage.name} needs ${upstream} to be complete, but it is ${up.state}${up.reason ? ` (${up.reason})` : ""}. ` +
              `Run \`pnpm pipeline run ${stage.name}\` without --only to run it first.`,
          );
        }
      }
      if (options.dryRun && stage.estimate) {
        const ctx = this.context(stage, signal, new UsageMeter());
        const estimate = await stage.estimate(ctx);
        reports.push({ stage: stage.name, action: "estimated", estimate });
        this.log.info(
          `${stage.name}: would send ${estimate.requests} requests, ~${estimate.promptTokens} prompt + ~${estimate.completionTokens} completion tokens${estimate.costUsd !== undefined ? `, ~$${estimate.costUsd.toFixed(2)}` : ""}${estimate.note ? ` (${estimate.note})` : ""}`,
        );
        break;
      }
      reports.push(await this.runStage(stage, status, signal));
    }
    return reports;
  }

  private context(stage: Stage<unknown>, signal: AbortSignal, usage: UsageMeter): StageContext<unknown> {
    const store = this.store(stage.name);
    return {
      name: stage.name,
      config: this.configOf(stage),
      root: this.root,
      dataDir: this.dataDir,
      workDir: store.workDir,
      limit: this.options.limit,
      signal,
      log: createLogger(stage.name),
      services: this.options.services,
      usage,
      read: (name, opts) => this.readCompleted(name, opts),
      countOf: (name) => this.store(name).manifest()?.counts.out,
    };
  }

  private readCompleted(name: string, options?: { rejects?: boolean }) {
    return this.store(name).read(options);
  }

  private async runStage(
    stage: Stage<unknown>,
    status: StageStatus,
    signal: AbortSignal,
  ): Promise<StageReport> {
    const store = this.store(stage.name);
    const unlock = store.lock();
    const previous = status.manifest;
    const usage = new UsageMeter(previous?.usage);
    const started = Date.now();
    const now = new Date().toISOString();
    const manifest: Manifest = {
      version: 1,
      stage: stage.name,
      state: "running",
      configHash: status.configHash,
      upstream: Object.fromEntries(
        stage.upstream.map((u) => [u, this.store(u).manifest()?.outputHash ?? ""]),
      ),
      counts: previous?.counts ?? { in: 0, out: 0, rejected: 0, failed: 0 },
      usage: usage.totals,
      runs: (previous?.runs ?? 0) + 1,
      pid: process.pid,
      startedAt: previous?.startedAt ?? now,
      updatedAt: now,
      elapsedMs: previous?.elapsedMs ?? 0,
    };
    store.saveManifest(manifest);
    const ctx = this.context(stage, signal, usage);
    const progress = createProgress(stage.name, {
      total: stage.kind === "record" && !stage.input ? ctx.countOf(stage.upstream[0]!) : undefined,
      ...(this.options.progressStream ? { stream: this.options.progressStream } : {}),
    });
    if (stage.kind === "record" && stage.inputSize) progress.setTotal(await stage.inputSize(ctx));
    const hooks = {
      progress,
      checkpoint: (counts: Manifest["counts"]) =>
        store.saveManifest({
          ...manifest,
          counts,
          usage: usage.totals,
          elapsedMs: manifest.elapsedMs + (Date.now() - started),
        }),
    };
    let result: ExecutionResult;
    try {
      result =
        stage.kind === "record"
          ? await executeRecordStage(stage, ctx, store, hooks)
          : await executeGlobalStage(stage, ctx, store, hooks, new OutputDigest());
    } catch (error) {
      store.saveManifest({ ...store.manifest()!, state: "partial", pid: undefined, usage: usage.totals });
      unlock();
      throw error;
    }
    const elapsedMs = manifest.elapsedMs + (Date.now() - started);
    const finished: Manifest = {
      ...manifest,
      counts: result.counts,
      usage: usage.totals,
      elapsedMs,
      pid: undefined,
    };
    if (result.interrupted) {
      store.saveManifest({ ...finished, state: "partial" });
      unlock();
      throw new InterruptedError(
        `interrupted: ${stage.name} saved ${result.counts.in} records so far. Run the same command again to resume where it stopped.`,
      );
    }
    if (result.counts.failed > 0) {
      store.saveManifest({ ...finished, state: "partial" });
      unlock();
      const reasons = [...result.failures].map(([r, n]) => `${n} x ${r}`).join(", ");
      throw new UserError(
        `${stage.name}: ${result.counts.failed} records failed (${reasons}); the other ${result.counts.in} are saved. ` +
          `See \`pnpm pipeline status\`; run the same command again to retry the failed ones.`,
        { exitCode: 1 },
      );
    }
    const complete: Manifest = {
      ...finished,
      state: "complete",
      outputHash: result.outputHash,
      finishedAt: new Date().toISOString(),
    };
    store.saveManifest(complete);
    if (stage.summarize) {
      complete.stats = await stage.summarize(ctx);
      store.saveManifest(complete);
    }
    unlock();
    this.log.info(
      `${stage.name}: complete: ${result.counts.in} in, ${result.counts.out} out, ${result.counts.rejected} rejected (${formatDuration(Date.now() - started)})`,
    );
    return {
      stage: stage.name,
      action: "ran",
      counts: result.counts,
      stats: complete.stats,
      elapsedMs: Date.now() - started,
    };
  }

  /** Removes a stage's outputs and marks every stage downstream of it stale. */
  reset(name: string, reason = `upstream ${name} was reset`, options: { purge?: boolean } = {}): void {
    this.stage(name);
    this.store(name).reset(options);
    for (const down of this.downstreamOf(name)) {
      const store = this.store(down);
      const manifest = store.manifest();
      if (manifest && !manifest.staleReason) store.saveManifest({ ...manifest, staleReason: reason });
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

  stageDir(name: string): string {
    return join(this.dataDir, name);
  }
}
