// Where a shard of a stage keeps its files: `<dataDir>/<stage>/shards/K-of-N/`, a stage store of its
// own (manifest.json, parts/, lock), so two shards never write the same file.
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";

export interface ShardSpec {
  /** 0 .. count-1 */
  index: number;
  count: number;
}

/** `K-of-N`, the shard's directory name under `<stage>/shards/`. */
export function shardLabel(spec: ShardSpec): string {
  return `${spec.index}-of-${spec.count}`;
}

/** The inverse of `shardLabel`; undefined for any other name. */
function parseShardLabel(name: string): ShardSpec | undefined {
  const match = /^(\d+)-of-(\d+)$/.exec(name);
  if (!match) return undefined;
  const spec = { index: Number(match[1]), count: Number(match[2]) };
  return spec.count > 0 && spec.index < spec.count ? spec : undefined;
}

export const SHARDS_DIR = "shards";

/** The shards of a stage that have a directory, ordered by count, then index. */
export function listShards(stageDir: string): ShardSpec[] {
  const dir = join(stageDir, SHARDS_DIR);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .map(parseShardLabel)
    .filter((s): s is ShardSpec => s !== undefined)
    .sort((a, b) => a.count - b.count || a.index - b.index);
}
