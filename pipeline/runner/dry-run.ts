// `run --dry-run` for a stage that sends LLM requests: its own estimate of requests and tokens, priced
// from the configured endpoints, logged and reported instead of a run. For one shard (`--shard K/N`),
// the estimate covers the shard's own records.
import type { PipelineRecord } from "../record.js";
import type { Stage } from "../stage.js";
import { UsageMeter } from "../usage.js";
import { stageContext } from "./context.js";
import { costText, watchPrices } from "./estimate-cost.js";
import { type ShardSpec, shardTest } from "./shard.js";
import type { RunnerCore, StageReport } from "./types.js";

export async function estimateStage(
  r: RunnerCore,
  stage: Stage<unknown>,
  signal: AbortSignal,
  shard?: ShardSpec,
): Promise<StageReport> {
  const prices = watchPrices(r.options.services);
  const ctx = {
    ...stageContext(r, stage, signal, new UsageMeter(), shard, undefined, true),
    services: prices.services,
  };
  // a record-wise stage's input as its run would take it (a global stage's estimate reads its own)
  const input = async function* (): AsyncGenerator<PipelineRecord> {
    if (stage.kind !== "record") return;
    const mine = shard ? shardTest(shard) : () => true;
    for await (const record of stage.input ? stage.input(ctx, undefined) : ctx.read(stage.upstream[0]!))
      if (mine(record)) yield record;
  };
  const estimate = await stage.estimate!(ctx, input());
  const cost = costText(estimate, prices.unpriced);
  r.log.info(
    `${r.store(stage.name, shard).label}: would send ${estimate.requests} requests, ~${estimate.promptTokens} prompt + ` +
      `~${estimate.completionTokens} completion tokens${cost}${estimate.note ? ` (${estimate.note})` : ""}`,
  );
  return { stage: stage.name, action: "estimated", estimate };
}
