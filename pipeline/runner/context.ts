// The `ctx` a stage is handed: its config, services metered into its usage, its own work dir, and
// reads limited to itself and its upstream stages (a shard reads its own outputs and the whole of
// its upstream stages).
import { mkdirSync } from "node:fs";
import { createLogger } from "../log.js";
import { stageServices } from "../services.js";
import type { Stage, StageContext } from "../stage.js";
import { Tally } from "../store/index.js";
import type { UsageMeter } from "../usage.js";
import { indexStage, type StageIndex, sampleOf } from "./read.js";
import type { ShardSpec } from "./shard.js";
import type { RunnerCore } from "./types.js";

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
