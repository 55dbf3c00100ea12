// The stage contract. A stage says what the paper says about one step; the runner does the
// bookkeeping once for all (resume, counting, rejects, staleness, progress, signals). A record-wise
// stage's `process` maps one input record to outputs and rejects, each input's outcome committed in
// one append (a kill -9 loses nothing); a global stage's `run` sees all of its input, its outputs
// committed together when it returns (an interrupted one starts over). docs/design.md has the rest.
import type { z } from "zod";
import type { RootConfig } from "./config/schema.js";
import type { Logger } from "./log.js";
import type { PipelineRecord, RecordOutcome, Reject } from "./record.js";
import type { DeclaredMethods, StageRegistry } from "./registry.js";
import type { StageRelease, StageReport } from "./report/contract.js";
import type { Services } from "./services.js";
import type { SampleOptions } from "./store/output-index.js";
import type { UsageMeter } from "./usage.js";

export interface ReadOptions {
  /** read the stage's rejects instead of its outputs */
  rejects?: boolean;
}

/** Some of a complete stage's outputs (`ctx.sample`): the same records, in upstream order, on every call. */
export interface Sample {
  size(): Promise<number>;
  records(): AsyncIterable<PipelineRecord>;
}

export interface StageContext<C> {
  name: string;
  /** this stage's section of the config, validated by its schema */
  config: C;
  /** the whole validated config (services: hub, llm, sandbox, eval; stages' own sections) */
  root: RootConfig;
  dataDir: string;
  /** `<dataDir>/<stage>/work`: the stage's private files (downloads, indexes); kept across resumes */
  workDir: string;
  /** `--limit N`: stages that read source rows take only the first N of each source */
  limit: number | undefined;
  /** aborted on SIGINT/SIGTERM: stop starting new work, let in-flight work finish */
  signal: AbortSignal;
  log: Logger;
  services: Services;
  /**
   * LLM usage of this stage; persisted in its manifest. (The programs `services.sandbox()` runs are
   * counted by the runner: the manifest's `sandbox`.)
   */
  usage: UsageMeter;
  /** stream a completed stage's outputs (or rejects) */
  read(stage: string, options?: ReadOptions): AsyncIterable<PipelineRecord>;
  /**
   * A completed upstream stage's outputs whose `field` `where` takes, or a seeded sample of `count` of
   * them (pipeline/store/output-index.ts: `sampleRows`). A sample is chosen from an index of the
   * stage's outputs, and only its records are read.
   */
  sample(stage: string, options: SampleOptions): Sample;
  /** number of output records of a completed stage, from its manifest (for progress totals) */
  countOf(stage: string): number | undefined;
  /** the stages of this run and the dialogue methods they declare (the list the CLI hands down) */
  registry: StageRegistry;
  /**
   * Adds `value` (default 1) to the counter `name`. The runner sums them into the manifest's
   * `counters`; a record-wise stage's are committed with the record they were counted for, so they
   * survive a kill -9 exactly, and add up over resumed runs and over shards.
   */
  stat(name: string, value?: number): void;
}

interface StageBase<C, S, Sum> {
  name: string;
  /** one line for `pnpm pipeline stages` */
  description: string;
  /**
   * The dialogue methods this stage makes (pipeline/dialogue.ts): declaring them makes it a dialogue
   * stage, which validate reads, and export and the report count per method. A function of the config
   * declares methods the config names (pipeline/registry.ts).
   */
  methods?: DeclaredMethods;
  upstream: readonly string[];
  /**
   * schema of `stages.<name>` in the config; `{}` must parse (every key has a default). Its settings
   * marked `operational()` (pipeline/hash.ts) are left out of the config's hash.
   */
  configSchema: z.ZodType<C>;
  /**
   * May be switched off with `stages.<name>.enabled: false` (a dialogue method): it is then not run,
   * and the stages after it go on without its records (runner/plan.ts).
   */
  switchable?: boolean;
  /**
   * Anything besides the stage's own config whose change makes its outputs stale, e.g. the model and
   * sampling parameters of the LLM role it uses, or `limit` for stages that read sources.
   */
  fingerprint?(ctx: { config: C; root: RootConfig; limit: number | undefined }): unknown;
  /**
   * What changed, where `fingerprint` names something a user may change outside the config (a local
   * source file): `status` says it instead of "its configuration changed". `summary`: the last run's.
   */
  inputChanged?(ctx: { config: C; summary: unknown }): string | undefined;
  /**
   * `run --dry-run`: what the stage would send to LLMs, before any spend; `input` is a record-wise
   * stage's input as its run would take it (a global stage's is empty). Requests already in the
   * response cache are not counted.
   */
  estimate?(ctx: StageContext<C>, input: AsyncIterable<PipelineRecord>): Promise<CostEstimate>;
  /**
   * The per-run state (clients, tallies) handed to input, process/run, summarize and close: made
   * once per run of the stage (or of one shard), after the stage's lock is taken.
   */
  open?(ctx: StageContext<C>): S | Promise<S>;
  /** releases what `open` made; called once the run ends, however it ends */
  close?(state: S, ctx: StageContext<C>): void | Promise<void>;
  /**
   * statistics to keep in the manifest and print at the end, computed after the stage completes;
   * `tally` holds the whole stage's `ctx.stat` counters and reject reasons (all runs, all shards);
   * undefined: nothing to keep
   */
  summarize?(ctx: StageContext<C>, state: S, tally: StageTally): Promise<Sum | undefined>;
  /**
   * The shape of the summary: a manifest's `stats` are read back through it, so a summary written
   * in another shape shows in the report as unreadable instead of as an empty section.
   */
  summarySchema?: z.ZodType<Sum>;
  /** the stage's steps in the report's flow chart and its own report sections (pipeline/report/contract.ts) */
  report?: StageReport<Sum>;
  /**
   * Declared by the stage that makes the release: its directory (`<data_dir>/<name>/`) holds the files
   * `push` uploads, which `files` lists from its summary, and the report.
   */
  release?: StageRelease<Sum>;
}

/** The summary of a stage that does not declare its type. */
export type AnySummary = Record<string, unknown>;

export interface RecordStage<C = unknown, S = unknown, Sum extends object = AnySummary>
  extends StageBase<C, S, Sum> {
  kind: "record";
  /** records in flight at once; default 1 */
  concurrency?(ctx: StageContext<C>): number;
  /**
   * The input stream. Default: the outputs of `upstream[0]`. Must yield the same records in the same
   * order on every call while the configuration is unchanged: resume skips by position. `state`: what
   * `open` made; undefined in a dry run, which opens nothing.
   */
  input?(ctx: StageContext<C>, state: S | undefined): AsyncIterable<PipelineRecord>;
  /** how many input records to expect, for progress (optional) */
  inputSize?(ctx: StageContext<C>): Promise<number | undefined>;
  process(record: PipelineRecord, ctx: StageContext<C>, state: S): Promise<RecordOutcome>;
}

/** What the runner counted for a stage: its `ctx.stat` counters and its rejects by reason. */
export interface StageTally {
  counters: Readonly<Record<string, number>>;
  rejectReasons: Readonly<Record<string, number>>;
}

export interface CostEstimate {
  requests: number;
  promptTokens: number;
  completionTokens: number;
  costUsd?: number;
  /** how the numbers were obtained, e.g. "2 rounds x 5,000 records, 40% assumed to survive round 1" */
  note?: string;
}

export interface Emitter {
  out(record: PipelineRecord): Promise<void>;
  reject(reject: Reject): Promise<void>;
}

export interface GlobalStage<C = unknown, S = unknown, Sum extends object = AnySummary>
  extends StageBase<C, S, Sum> {
  kind: "global";
  /** may return the stage's statistics: the runner keeps them in the manifest (else `summarize`'s) */
  // biome-ignore lint/suspicious/noConfusingVoidType: a stage with nothing to report returns nothing
  run(ctx: StageContext<C>, emit: Emitter, state: S): Promise<Sum | undefined | void>;
}

export type Stage<C = unknown, S = unknown, Sum extends object = AnySummary> =
  | RecordStage<C, S, Sum>
  | GlobalStage<C, S, Sum>;

/** Identity helper that keeps the config, per-run state and summary types of a stage definition. */
export function defineStage<C, S = unknown, Sum extends object = AnySummary>(
  stage: Stage<C, S, Sum>,
): Stage<C, S, Sum> {
  return stage;
}
