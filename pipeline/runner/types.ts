// The runner's shapes: what a stage's status, a run's options and its report look like, and
// `RunnerCore`, the part of the Runner facade (pipeline/runner.ts) that the helpers beside this file
// are handed. They take the runner as a parameter instead of importing it, so no arrow points back up.
import type { LoadedConfig } from "../config/load.js";
import type { RootConfig } from "../config/schema.js";
import type { Logger } from "../log.js";
import type { PipelineRecord } from "../record.js";
import type { StageRegistry } from "../registry.js";
import type { Services } from "../services.js";
import type { CostEstimate, ReadOptions, Stage } from "../stage.js";
import type { IndexOptions, IndexRow, Manifest, StageStore } from "../store/index.js";
import type { ShardSpec } from "./shard.js";
import type { ShardStatus } from "./shard-status.js";

/** A complete stage's outputs, indexed (pipeline/store/output-index.ts). */
export interface StageIndex {
  /** one per output record, in the order `read` yields them: its id, the fields asked for, its place */
  readonly rows: readonly IndexRow[];
  /** the records of these rows, in the order given, each read by its offset */
  records(rows: Iterable<IndexRow>): AsyncIterable<PipelineRecord>;
}

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

/** What the helpers under pipeline/runner/ read of the Runner. */
export interface RunnerCore {
  readonly stages: readonly Stage<unknown>[];
  readonly loaded: LoadedConfig;
  readonly root: RootConfig;
  readonly dataDir: string;
  readonly registry: StageRegistry;
  readonly log: Logger;
  readonly options: RunnerOptions;
  /** stages switched off by `stages.<name>.enabled: false` */
  readonly switchedOff: ReadonlySet<string>;
  stage(name: string): Stage<unknown>;
  store(name: string, shard?: ShardSpec): StageStore;
  read(name: string, options?: ReadOptions): AsyncGenerator<PipelineRecord>;
  index(name: string, fields: readonly string[], options?: IndexOptions): Promise<StageIndex>;
  configOf(stage: Stage<unknown>): unknown;
  configHash(stage: Stage<unknown>): string;
  status(name: string): StageStatus;
  shardCount(name: string): number | undefined;
  /** `manifest`: the shard's, whose recorded invocation reruns it as it was run */
  shardCommand(name: string, shard: ShardSpec, manifest?: Manifest): string;
  shardStatus(
    stage: Stage<unknown>,
    shard: ShardSpec,
    configHash?: string,
    statusOf?: (name: string) => StageStatus,
  ): ShardStatus;
  plan(targets: string[], options?: { only?: boolean }): Stage<unknown>[];
  downstreamOf(name: string): string[];
}
