// Plans the stage graph and runs it: every stage named, plus (unless --only) every upstream stage that
// is not complete for the current configuration. A stage is stale when its own config (or fingerprint)
// changed, or an upstream's outputs changed since it ran; stale stages are recomputed from scratch,
// partial ones resume where they stopped.
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import type { LoadedConfig } from "./config/load.js";
import { validate } from "./config/load.js";
import type { RootConfig } from "./config/schema.js";
import { ConfigError, InterruptedError, UserError } from "./errors.js";
import { hashOf } from "./hash.js";
import { createLogger, type Logger } from "./log.js";
import {
  type ExecutionResult,
  executeGlobalStage,
  executeRecordStage,
  type InputCheck,
} from "./runner/execute.js";
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
      manifest.lastError ??
      (manifest.counts.failed > 0
        ? `${manifest.counts.failed} failed, retried on the next run`
        : "interrupted");
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
      if (signal.aborted) {
        throw new InterruptedError(`interrupted before ${stage.name}; run the same command again to go on`);
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

  private checkUpstream(stage: Stage<unknown>): void {
    for (const upstream of stage.upstream) {
      const up = this.status(upstream);
      if (up.state !== "complete") {
        throw new UserError(
          `stage ${stage.name} needs ${upstream} to be complete, but it is ${up.state}${up.reason ? ` (${up.reason})` : ""}. ` +
            `Run \`pnpm pipeline run ${stage.name}\` without --only to run it first.`,
        );
      }
    }
  }

  private async estimate(stage: Stage<unknown>, signal: AbortSignal): Promise<StageReport> {
    const estimate = await stage.estimate!(this.context(stage, signal, new UsageMeter()));
    const cost = estimate.costUsd !== undefined ? `, ~$${estimate.costUsd.toFixed(2)}` : "";
    this.log.info(
      `${stage.name}: would send ${estimate.requests} requests, ~${estimate.promptTokens} prompt + ` +
        `~${estimate.completionTokens} completion tokens${cost}${estimate.note ? ` (${estimate.note})` : ""}`,
    );
    return { stage: stage.name, action: "estimated", estimate };
  }

  private context(stage: Stage<unknown>, signal: AbortSignal, usage: UsageMeter): StageContext<unknown> {
    const store = this.store(stage.name);
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
      services: this.options.services,
      usage,
      read: (name, opts) => {
        // upstream stages are checked complete before a stage starts; anything else would bypass staleness
        if (name !== stage.name && !stage.upstream.includes(name)) {
          throw new Error(`stage ${stage.name} read stage ${name}, which is not one of its upstream stages`);
        }
        return this.store(name).read(opts);
      },
      countOf: (name) => this.store(name).manifest()?.counts.out,
    };
  }

  /** Runs one stage whose lock the caller holds. */
  private async runStage(
    stage: Stage<unknown>,
    status: StageStatus,
    signal: AbortSignal,
    forced: boolean,
  ): Promise<StageReport> {
    const store = this.store(stage.name);
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
      ...(previous?.inputCheck ? { inputCheck: previous.inputCheck } : {}),
    };
    store.saveManifest(manifest);
    const ctx = this.context(stage, signal, usage);
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
    try {
      const progress = createProgress(stage.name, {
        total: this.progressTotal(stage, ctx),
        ...(this.options.progressStream ? { stream: this.options.progressStream } : {}),
      });
      if (stage.kind === "record" && stage.inputSize) progress.setTotal(await stage.inputSize(ctx));
      const hooks = {
        progress,
        checkpoint: (now: Manifest["counts"], input?: InputCheck) => {
          counts = now;
          if (input) manifest.inputCheck = input;
          store.saveManifest({ ...manifest, counts, usage: usage.totals, elapsedMs: elapsed() });
        },
        ...(previous?.inputCheck ? { previousInput: previous.inputCheck } : {}),
      };
      result =
        stage.kind === "record"
          ? await executeRecordStage(stage, ctx, store, hooks)
          : await executeGlobalStage(stage, ctx, store, hooks, new OutputDigest());
      counts = result.counts;
    } catch (error) {
      partial((error as Error)?.message ?? String(error));
      throw error;
    }
    if (result.interrupted) {
      partial();
      throw new InterruptedError(
        `interrupted: ${stage.name} saved ${result.counts.in} records so far. ${again} to resume where it stopped.`,
      );
    }
    if (result.counts.failed > 0) {
      const reasons = [...result.failures]
        .map(([reason, f]) => `${f.count} x ${reason}${f.example ? ` (e.g. ${f.example})` : ""}`)
        .join("; ");
      partial(`${result.counts.failed} records failed: ${reasons}`);
      throw new UserError(
        `${stage.name}: ${result.counts.failed} records failed: ${reasons}. The other ${result.counts.in} are saved; ` +
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
    };
    if (stage.summarize) complete.stats = await stage.summarize(ctx);
    store.saveManifest(complete);
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
      for (const down of this.downstreamOf(name)) {
        const status = this.status(down);
        if (status.state === "running") {
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
}
