// The plan of a run: its stages, each one's validated config (a switchable stage's `enabled: false`
// taken out before its schema sees it), the hash that says when a stage is stale, and the stages a
// run of some targets takes (every upstream, unless --only). status.ts, read.ts and ../runner.ts
// build on it, each a class over the one below.
import { resolve } from "node:path";
import { checkStages, invalidConfig, type LoadedConfig } from "../config/load.js";
import type { RootConfig } from "../config/schema.js";
import { UserError } from "../errors.js";
import { hashOf, settingsOf, withoutOperational } from "../hash.js";
import { createLogger, type Logger } from "../log.js";
import { StageRegistry } from "../registry.js";
import type { Services } from "../services.js";
import type { Stage } from "../stage.js";
import { StageStore } from "../store/stage-store.js";
import type { ShardSpec } from "./shard.js";

export interface RunnerOptions {
  limit?: number;
  log?: Logger;
  /** built once per run, closed at the end */
  services: Services;
  progressStream?: NodeJS.WriteStream;
}

export interface RunOptions {
  only?: boolean;
  force?: boolean;
  dryRun?: boolean;
  signal?: AbortSignal;
  /** run only this shard of each named stage (record-wise stages only; implies --only) */
  shard?: ShardSpec;
}

/** What a stage downstream records as a switched-off upstream's output hash (manifest.upstream). */
export const SWITCHED_OFF = "switched-off";

export function switchedOffReason(name: string): string {
  return `stages.${name}.enabled: false`;
}

export class RunnerPlan {
  readonly dataDir: string;
  readonly log: Logger;
  /** the stage names and the dialogue methods each declares, handed to every stage as `ctx.registry` */
  readonly registry: StageRegistry;
  private readonly byName: Map<string, Stage<unknown>>;
  private readonly configs: Map<string, unknown>;
  /** stages switched off by `stages.<name>.enabled: false` */
  readonly switchedOff: Set<string>;

  constructor(
    readonly stages: readonly Stage<unknown>[],
    readonly loaded: LoadedConfig,
    readonly options: RunnerOptions,
  ) {
    this.byName = new Map(stages.map((s) => [s.name, s]));
    // downstreamOf and the run order rely on it
    stages.forEach((stage, i) => {
      const late = stage.upstream.find((up) => !stages.slice(0, i).some((s) => s.name === up));
      if (late) throw new Error(`stage ${stage.name} reads ${late}, which is not listed before it`);
    });
    this.registry = new StageRegistry(stages, loaded.config);
    this.dataDir = resolve(loaded.config.data_dir);
    this.log = options.log ?? createLogger();
    const checked = checkStages(stages, loaded.config.stages, loaded.lines);
    if (checked.problems.length > 0) throw invalidConfig(loaded.source, checked.problems);
    this.configs = checked.configs;
    this.switchedOff = checked.switchedOff;
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

  configOf(stage: Stage<unknown>): unknown {
    return this.configs.get(stage.name);
  }

  configHash(stage: Stage<unknown>): string {
    return hashOf(this.fingerprintOf(stage));
  }

  /** What `configHash` hashes, one short value per setting, for saying later which of them changed. */
  configSettings(stage: Stage<unknown>): Record<string, string> | undefined {
    return settingsOf(this.fingerprintOf(stage));
  }

  private fingerprintOf(stage: Stage<unknown>) {
    const config = this.configOf(stage);
    const extra = stage.fingerprint?.({ config, root: this.root, limit: this.options.limit });
    return { config: withoutOperational(stage.configSchema, config), extra, stage: stage.name };
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

  /** Every stage that reads `name`, directly or through others (pipeline order puts upstream first). */
  downstreamOf(name: string): string[] {
    const result = new Set<string>();
    for (const s of this.stages) if (s.upstream.some((u) => u === name || result.has(u))) result.add(s.name);
    return [...result];
  }
}
