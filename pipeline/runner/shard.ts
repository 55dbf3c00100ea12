// Shards: shard K of N runs only the records whose id hashes to K, so N machines can run one
// record-wise stage side by side on shared storage, each writing files of its own (docs/design.md,
// "Shards"). The spec comes from `--shard K/N`, or from the scheduler's environment when the flag is
// absent: a Slurm job array, or a Kubernetes Indexed Job (whose environment carries no count).
import { hash } from "node:crypto";
import { UserError } from "../errors.js";
import type { PipelineRecord } from "../record.js";
import type { ShardSpec } from "../store/shard-dirs.js";

export type { ShardSpec } from "../store/shard-dirs.js";

/** Environment variable that gives N next to a Kubernetes Indexed Job's JOB_COMPLETION_INDEX. */
export const SHARDS_ENV = "CODEFEEDBACK_SHARDS";

/** `K/N` as the flag takes it. */
export function shardArg(spec: ShardSpec): string {
  return `${spec.index}/${spec.count}`;
}

const DECIMAL = /^\d{1,9}$/;

/** Parses `K/N` (0 <= K < N); anything else is a usage error (exit 2) naming `flag`. */
export function parseShardSpec(text: string, flag = "--shard"): ShardSpec {
  const match = /^\s*(\d{1,9})\s*\/\s*(\d{1,9})\s*$/.exec(String(text));
  const advice = "it takes K/N, shard K (from 0 to N-1) of N, e.g. --shard 0/4";
  if (!match) throw new UserError(`${flag} ${JSON.stringify(text)} is not a shard: ${advice}`);
  const index = Number(match[1]);
  const count = Number(match[2]);
  if (count === 0) throw new UserError(`${flag} ${text}: the number of shards must be at least 1; ${advice}`);
  if (index >= count) {
    throw new UserError(
      `${flag} ${text}: there is no shard ${index} of ${count}, shards are numbered 0 to ${count - 1}; ${advice}`,
    );
  }
  return { index, count };
}

function integerFrom(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const value = env[name];
  if (value === undefined || value.trim() === "") return undefined;
  if (!DECIMAL.test(value.trim())) {
    throw new UserError(
      `${name}=${JSON.stringify(value)} is not a whole number, so the shard cannot be read from it`,
    );
  }
  return Number(value.trim());
}

/**
 * The shard a scheduler started this process as, when `--shard` is absent:
 * - Slurm job array: K = SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN (so `--array=1-4` works too),
 *   N = SLURM_ARRAY_TASK_COUNT;
 * - Kubernetes Indexed Job: K = JOB_COMPLETION_INDEX, N = $CODEFEEDBACK_SHARDS, else `shards:` in
 *   the config (the pod's environment does not carry the Job's completions).
 * Undefined when neither is set. `describe` says where it came from, for messages.
 */
export function shardFromEnvironment(
  env: NodeJS.ProcessEnv,
  configuredCount?: number,
): { spec: ShardSpec; describe: string } | undefined {
  const task = integerFrom(env, "SLURM_ARRAY_TASK_ID");
  if (task !== undefined) {
    const count = integerFrom(env, "SLURM_ARRAY_TASK_COUNT");
    if (count === undefined) {
      throw new UserError(
        "SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not, so the number of shards is unknown; pass --shard K/N",
      );
    }
    const min = integerFrom(env, "SLURM_ARRAY_TASK_MIN") ?? 0;
    const describe = `SLURM_ARRAY_TASK_ID=${task} (of ${count}, from ${min})`;
    return { spec: parseShardSpec(`${task - min}/${count}`, describe), describe };
  }
  const index = integerFrom(env, "JOB_COMPLETION_INDEX");
  if (index !== undefined) {
    const count = integerFrom(env, SHARDS_ENV) ?? configuredCount;
    if (count === undefined) {
      throw new UserError(
        `JOB_COMPLETION_INDEX is set but the number of shards is not: set ${SHARDS_ENV} to the Job's completions ` +
          "(or `shards:` in the config), or pass --shard K/N",
      );
    }
    const describe = `JOB_COMPLETION_INDEX=${index} (of ${count})`;
    return { spec: parseShardSpec(`${index}/${count}`, describe), describe };
  }
  return undefined;
}

/**
 * The shard a record belongs to: a hash of its id alone, so the same record lands in the same shard
 * on every machine and every run with the same N. 48 bits of SHA-1: any bias mod N is below 1e-9.
 */
export function shardOfId(id: string, count: number): number {
  if (count === 1) return 0;
  // the first 12 hex digits are those 48 bits (a hex string costs less than a Buffer to make)
  return Number.parseInt(hash("sha1", id).slice(0, 12), 16) % count;
}

/** Whether a record is the shard's. */
export function shardTest(shard: ShardSpec): (record: PipelineRecord) => boolean {
  return (record) => shardOfId(record.id, shard.count) === shard.index;
}
