export { DoneSet } from "./done-set.js";
export { type Manifest, readManifest, type StageCounts, type StoredState } from "./manifest.js";
export {
  type IndexOptions,
  type IndexRow,
  readIndexed,
  type SampleOptions,
  sampleRows,
} from "./output-index.js";
export { type Entry, PartWriter, readEntries, repairTail, StoreError } from "./parts.js";
export { listShards, parseShardLabel, type ShardSpec, shardLabel } from "./shard-dirs.js";
export {
  combineDigests,
  HEARTBEAT_MS,
  isRunning,
  OutputDigest,
  type ScanResult,
  StageStore,
} from "./stage-store.js";
export { type Counters, sumCounters, Tally } from "./tally.js";
