// The `ctx` a stage is handed: its config, services metered into its usage, its own work dir, and
// reads limited to itself and its upstream stages (a shard reads its own outputs and the whole of
// its upstream stages).
import { mkdirSync } from "node:fs";
import { createLogger } from "../log.js";
import type { PipelineRecord } from "../record.js";
import { stageServices } from "../services.js";
import type { Sample, Stage, StageContext } from "../stage.js";
import {
  type IndexOptions,
  type IndexRow,
  readIndexed,
  type SampleOptions,
  sampleRows,
  Tally,
} from "../store/index.js";
import { damagedStage } from "../store/seal.js";
import type { UsageMeter } from "../usage.js";
import type { ShardSpec } from "./shard.js";
import type { RunnerCore, StageIndex } from "./types.js";

export function stageContext(
  r: RunnerCore,
  stage: Stage<unknown>,
  signal: AbortSignal,
  usage: UsageMeter,
  shard?: ShardSpec,
  tally = new Tally(),
  /** a dry run's: it reads, and writes nothing (not even an upstream's index) */
  dryRun = false,
): StageContext<unknown> {
  const store = r.store(stage.name, shard);
  // Every stage may keep private files; having the dir there is part of the contract.
  mkdirSync(store.workDir, { recursive: true });
  // an upstream's index is read once per run, however many samples are taken of it
  const indexes = new Map<string, Promise<StageIndex>>();
  return {
    name: stage.name,
    config: r.configOf(stage),
    root: r.root,
    dataDir: r.dataDir,
    workDir: store.workDir,
    limit: r.options.limit,
    signal,
    log: createLogger(stage.name),
    services: stageServices(r.options.services, usage),
    usage,
    read: (name, opts) => {
      // upstream stages are checked complete before a stage starts; anything else would bypass staleness
      if (name !== stage.name && !stage.upstream.includes(name)) {
        throw new Error(`stage ${stage.name} read stage ${name}, which is not one of its upstream stages`);
      }
      // a shard reads its own outputs, and the whole of its upstream stages
      return name === stage.name ? store.read(opts) : r.read(name, opts);
    },
    sample: (name, options) => {
      if (!stage.upstream.includes(name)) {
        throw new Error(`stage ${stage.name} sampled stage ${name}, which is not one of its upstream stages`);
      }
      const key = `${name}\n${options.field}`;
      const index = () => {
        if (!indexes.has(key)) indexes.set(key, indexStage(r, name, [options.field], { save: !dryRun }));
        return indexes.get(key)!;
      };
      return sampleOf(() => r.read(name), index, options);
    },
    countOf: (name) =>
      name === stage.name ? store.manifest()?.counts.out : r.status(name).manifest?.counts.out,
    // outside a record (record-wise stages count each record's with it: execute.ts)
    stat: (name, value = 1) => tally.add(tally.counters, name, value),
    registry: r.registry,
  };
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
 * A complete stage's outputs, indexed with `fields` (pipeline/store/output-index.ts): a sharded
 * stage's shards' indexes as one, in the order `read` yields, each row naming its part among all the
 * shards' parts.
 */
export async function indexStage(
  r: RunnerCore,
  name: string,
  fields: readonly string[],
  options: IndexOptions = {},
): Promise<StageIndex> {
  const status = r.status(name);
  if (status.state === "disabled") return { rows: [], records: async function* () {} };
  const stores = status.shards ? status.shards.map((shard) => r.store(name, shard)) : [r.store(name)];
  const shards: IndexRow[][] = [];
  const paths: string[] = [];
  for (const store of stores) {
    const index = await store.outputIndex(fields, options);
    for (const row of index.rows) row.part += paths.length;
    shards.push(index.rows);
    paths.push(...index.paths);
  }
  const dir = r.store(name).dir;
  return {
    rows: shards.length === 1 ? shards[0]! : mergeRows(shards),
    records: (some) => readIndexed(paths, some, (what) => damagedStage(name, dir, what)),
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
