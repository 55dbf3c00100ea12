// A stage's outputs and manifest as one, whether it ran in one process or in shards: what downstream
// stages, the report and push read, never a shard's files or `<stage>/manifest.json` directly.
import { silentLogger } from "../log.js";
import type { PipelineRecord } from "../record.js";
import type { ReadOptions, StageContext } from "../stage.js";
import type { Manifest } from "../store/index.js";
import { UsageMeter } from "../usage.js";
import { stageContext } from "./context.js";
import type { RunnerCore } from "./types.js";

/** A stage's committed outputs (or rejects): a sharded stage's are its shards', in shard order. */
export async function* readStage(
  r: RunnerCore,
  name: string,
  options: ReadOptions = {},
): AsyncGenerator<PipelineRecord> {
  const status = r.status(name);
  // switched off: whatever an earlier run left on disk is not part of this configuration
  if (status.state === "disabled") return;
  if (!status.shards) {
    yield* r.store(name).read(options);
    return;
  }
  yield* mergeShards(status.shards.map((shard) => r.store(name, shard).readOrdered(options)));
}

/**
 * A stage's manifest as one: a one-process stage's own; a sharded stage's shards summed (counts,
 * usage, counters, reject reasons) with, once every shard is done, the summary of the whole stage
 * made by its `summarize` over the union (a shard's summary covers only its own records).
 */
export async function manifestOfStage(r: RunnerCore, name: string): Promise<Manifest | undefined> {
  const status = r.status(name);
  if (!status.shards || status.state !== "complete" || !status.manifest) return status.manifest;
  const stage = r.stage(name);
  if (!stage.summarize) return status.manifest;
  const whole = stageContext(r, stage, new AbortController().signal, new UsageMeter(status.manifest.usage));
  const ctx: StageContext<unknown> = {
    ...whole,
    log: silentLogger,
    read: (from, options) => r.read(from, options),
    countOf: (from) => r.status(from).manifest?.counts.out,
  };
  const state = await stage.open?.(ctx);
  try {
    const { counters = {}, rejectReasons = {} } = status.manifest;
    return { ...status.manifest, stats: await stage.summarize(ctx, state, { counters, rejectReasons }) };
  } finally {
    await stage.close?.(state, ctx);
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
