// What stages, the report and push read: a stage's outputs and manifest as one, whether it ran in one
// process or in shards (never a shard's files or `<stage>/manifest.json` directly), an index of them
// to sample from, and the `ctx` a stage is handed, its reads limited to itself and its upstream stages.
import { mkdirSync } from "node:fs";
import { createLogger, silentLogger } from "../log.js";
import type { PipelineRecord } from "../record.js";
import { stageServices } from "../services.js";
import type { ReadOptions, Sample, Stage, StageContext } from "../stage.js";
import type { Manifest } from "../store/manifest.js";
import {
  type IndexOptions,
  type IndexRow,
  readIndexed,
  type SampleOptions,
  sampleRows,
} from "../store/output-index.js";
import { damagedStage } from "../store/seal.js";
import { Tally } from "../store/tally.js";
import { UsageMeter } from "../usage.js";
import type { ShardSpec } from "./shard.js";
import { RunnerStatus } from "./status.js";

/** A complete stage's outputs, indexed (pipeline/store/output-index.ts). */
export interface StageIndex {
  /** one per output record, in the order `read` yields them: its id, the fields asked for, its place */
  readonly rows: readonly IndexRow[];
  /** the records of these rows, in the order given, each read by its offset */
  records(rows: Iterable<IndexRow>): AsyncIterable<PipelineRecord>;
}

export class RunnerRead extends RunnerStatus {
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
   * A complete stage's outputs, indexed with `fields` (pipeline/store/output-index.ts): a sharded
   * stage's shards' indexes as one, in the order `read` yields, each row naming its part among all the
   * shards' parts.
   */
  async index(name: string, fields: readonly string[], options: IndexOptions = {}): Promise<StageIndex> {
    const status = this.status(name);
    if (status.state === "disabled") return { rows: [], records: async function* () {} };
    const stores = status.shards ? status.shards.map((shard) => this.store(name, shard)) : [this.store(name)];
    const shards: IndexRow[][] = [];
    const paths: string[] = [];
    for (const store of stores) {
      const index = await store.outputIndex(fields, options);
      for (const row of index.rows) row.part += paths.length;
      shards.push(index.rows);
      paths.push(...index.paths);
    }
    const dir = this.store(name).dir;
    return {
      rows: shards.length === 1 ? shards[0]! : mergeRows(shards),
      records: (some) => readIndexed(paths, some, (what) => damagedStage(name, dir, what)),
    };
  }

  /**
   * A stage's manifest as one: a one-process stage's own; a sharded stage's shards summed (counts,
   * usage, counters, reject reasons) with, once every shard is done, the summary of the whole stage
   * made by its `summarize` over the union (a shard's summary covers only its own records).
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

  /** The `ctx` a stage is handed (a shard reads its own outputs and the whole of its upstream stages). */
  context(
    stage: Stage<unknown>,
    signal: AbortSignal,
    usage: UsageMeter,
    shard?: ShardSpec,
    tally = new Tally(),
    /** a dry run's: it reads, and writes nothing (not even an upstream's index) */
    dryRun = false,
  ): StageContext<unknown> {
    const store = this.store(stage.name, shard);
    // Every stage may keep private files; having the dir there is part of the contract.
    mkdirSync(store.workDir, { recursive: true });
    // an upstream's index is read once per run, however many samples are taken of it
    const indexes = new Map<string, Promise<StageIndex>>();
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
      sample: (name, options) => {
        if (!stage.upstream.includes(name)) {
          throw new Error(
            `stage ${stage.name} sampled stage ${name}, which is not one of its upstream stages`,
          );
        }
        const key = `${name}\n${options.field}`;
        const index = () => {
          if (!indexes.has(key)) indexes.set(key, this.index(name, [options.field], { save: !dryRun }));
          return indexes.get(key)!;
        };
        return sampleOf(() => this.read(name), index, options);
      },
      countOf: (name) =>
        name === stage.name ? store.manifest()?.counts.out : this.status(name).manifest?.counts.out,
      // outside a record (record-wise stages count each record's with it: execute.ts)
      stat: (name, value = 1) => tally.add(tally.counters, name, value),
      registry: this.registry,
    };
  }
}

/**
 * `ctx.sample`: a sample is chosen from the upstream's index and only its records are read; without
 * a count the records stream from `read` at once, and the index gives the size only.
 */
export function sampleOf(
  read: () => AsyncIterable<PipelineRecord>,
  index: () => Promise<StageIndex>,
  options: SampleOptions,
): Sample {
  let chosen: Promise<{ index: StageIndex; rows: IndexRow[] }> | undefined;
  const choose = () => {
    chosen ??= index().then((index) => ({ index, rows: sampleRows(index.rows, options) }));
    return chosen;
  };
  return {
    size: async () => (await choose()).rows.length,
    async *records() {
      if (options.count === undefined) {
        for await (const record of read()) {
          const value = record[options.field];
          if (options.where(typeof value === "string" ? value : undefined)) yield record;
        }
        return;
      }
      const { index, rows } = await choose();
      yield* index.records(rows);
    },
  };
}

/**
 * The shards' rows in the order `mergeShards` reads their entries: a shard's rows are in its file
 * order (the order its records completed), and the shards' are merged entry by entry (an entry's
 * rows share its position), taking the shard whose next entry has the smallest position.
 */
function mergeRows(shards: readonly IndexRow[][]): IndexRow[] {
  const merged: IndexRow[] = [];
  const next = shards.map(() => 0);
  for (;;) {
    let pick = -1;
    for (let i = 0; i < shards.length; i++) {
      const head = shards[i]![next[i]!];
      if (head && (pick < 0 || head.at < shards[pick]![next[pick]!]!.at)) pick = i;
    }
    if (pick < 0) return merged;
    const rows = shards[pick]!;
    const at = rows[next[pick]!]!.at;
    while (next[pick]! < rows.length && rows[next[pick]!]!.at === at) merged.push(rows[next[pick]!++]!);
  }
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
