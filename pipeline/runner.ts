// The Runner: plans the stage graph and runs it: every stage named, plus (unless --only) every
// upstream stage that is not complete for the current configuration. A stage is stale when its own
// config (or fingerprint) changed, or an upstream's outputs changed since it ran; stale stages are
// recomputed from scratch, partial ones resume where they stopped. This file is the facade the CLI,
// the tests and the benches hold; the work is done by the helpers under pipeline/runner/, which take
// the runner as a parameter (runner/types.ts: RunnerCore) so that none of them imports this file.
import { resolve } from "node:path";
import type { LoadedConfig } from "./config/load.js";
import { validate } from "./config/load.js";
import type { RootConfig } from "./config/schema.js";
import { ConfigError, UserError } from "./errors.js";
import { hashOf, withoutOperational } from "./hash.js";
import { createLogger, type Logger } from "./log.js";
import type { PipelineRecord } from "./record.js";
import { StageRegistry } from "./registry.js";
import { indexStage } from "./runner/context.js";
import { manifestOfStage, readStage } from "./runner/read.js";
import { downstreamOfStage, resetStage } from "./runner/reset.js";
import { runAll } from "./runner/run-loop.js";
import { runShard } from "./runner/run-shard.js";
import type { ShardSpec } from "./runner/shard.js";
import type { ShardStatus } from "./runner/shard-status.js";
import { shardCommandOf, shardCountOf, shardStatusOf, stageStatus } from "./runner/status.js";
import { readSwitch } from "./runner/switch.js";
import type {
  RunnerCore,
  RunnerOptions,
  RunOptions,
  StageIndex,
  StageReport,
  StageStatus,
} from "./runner/types.js";
import type { ReadOptions, Stage } from "./stage.js";
import { type IndexOptions, type Manifest, StageStore } from "./store/index.js";

export type { RunnerOptions, RunOptions, StageReport, StageState, StageStatus } from "./runner/types.js";

export class Runner implements RunnerCore {
  readonly dataDir: string;
  private readonly byName: Map<string, Stage<unknown>>;
  /** read by the helpers under runner/ (RunnerCore) */
  readonly log: Logger;
  private readonly configs = new Map<string, unknown>();
  /** stages switched off by `stages.<name>.enabled: false` */
  private readonly switchedOffNames = new Set<string>();
  /** the stage names and the dialogue methods each declares, handed to every stage as `ctx.registry` */
  readonly registry: StageRegistry;

  constructor(
    readonly stages: readonly Stage<unknown>[],
    readonly loaded: LoadedConfig,
    readonly options: RunnerOptions,
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

  get switchedOff(): ReadonlySet<string> {
    return this.switchedOffNames;
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
  read(name: string, options: ReadOptions = {}): AsyncGenerator<PipelineRecord> {
    return readStage(this, name, options);
  }

  /** A complete stage's outputs, indexed by `fields`: a sharded stage's shards' as one (runner/read.ts). */
  index(name: string, fields: readonly string[], options?: IndexOptions): Promise<StageIndex> {
    return indexStage(this, name, fields, options);
  }

  /**
   * A stage's manifest as one: a one-process stage's own; a sharded stage's shards summed, with the
   * summary of the whole stage once every shard is done (runner/read.ts). What the report and push
   * read, never `<stage>/manifest.json` directly.
   */
  manifestOf(name: string): Promise<Manifest | undefined> {
    return manifestOfStage(this, name);
  }

  configOf(stage: Stage<unknown>): unknown {
    if (!this.configs.has(stage.name)) {
      const { enabled, section: raw } = readSwitch(
        stage,
        this.loaded.config.stages[stage.name],
        this.loaded.source,
      );
      if (!enabled) this.switchedOffNames.add(stage.name);
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
    return hashOf({ stage: stage.name, config: withoutOperational(stage.configSchema, config), extra });
  }

  /** Where a stage stands for the current configuration, and why (runner/status.ts). */
  status(name: string): StageStatus {
    return stageStatus(this, name);
  }

  /** N of a stage run in shards, or undefined when it was not (runner/status.ts). */
  shardCount(name: string): number | undefined {
    return shardCountOf(this, name);
  }

  /** The command that runs one shard, as `status` and refusals print it (as it was run, given its manifest). */
  shardCommand(name: string, shard: ShardSpec, manifest?: Manifest): string {
    return shardCommandOf(this, name, shard, manifest);
  }

  /** One shard's state; `statusOf` answers for the upstream stages (computed once for all shards). */
  shardStatus(
    stage: Stage<unknown>,
    shard: ShardSpec,
    configHash = this.configHash(stage),
    statusOf: (name: string) => StageStatus = (name) => this.status(name),
  ): ShardStatus {
    return shardStatusOf(this, stage, shard, configHash, statusOf);
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

  /** Runs `targets` (runner/run-loop.ts), or one shard of each (runner/run-shard.ts). */
  run(targets: string[], options: RunOptions = {}): Promise<StageReport[]> {
    if (options.shard) return runShard(this, targets, options.shard, options);
    return runAll(this, targets, options);
  }

  /**
   * Removes a stage's outputs and marks every stage downstream of it stale. Refuses while the stage
   * or anything downstream of it is being run by another process.
   */
  reset(name: string, reason = `upstream ${name} was reset`, options: { purge?: boolean } = {}): void {
    resetStage(this, name, reason, options);
  }

  downstreamOf(name: string): string[] {
    return downstreamOfStage(this, name);
  }
}
