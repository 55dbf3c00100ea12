// Small stages for testing the runner itself: a numbered source, a record-wise flat-map with rejects,
// failures and latency, and a global stage. They follow the same contract as the real stages.
import { z } from "zod";
import { operational } from "../../pipeline/hash.js";
import type { PipelineRecord } from "../../pipeline/record.js";
import { defineStage, type Stage } from "../../pipeline/stage.js";

export const numbersStage = defineStage({
  name: "numbers",
  description: "emits records 0..count-1",
  upstream: [],
  kind: "record",
  configSchema: z.object({ count: z.number().int().default(50) }).strict(),
  fingerprint: ({ limit }) => ({ limit }),
  input: async function* (ctx) {
    const n = ctx.limit ?? ctx.config.count;
    for (let i = 0; i < n; i++) yield { id: `n:${i}`, value: i };
  },
  process: async (record) => ({ out: [record] }),
});

/** n -> n copies of n (0 copies: rejected); multiples of `failEvery` fail while `failing` is set. */
export const expandStage = defineStage({
  name: "expand",
  description: "flat-map with rejects, failures and latency",
  upstream: ["numbers"],
  // stands in for a dialogue method: `enabled: false` leaves it out
  switchable: true,
  kind: "record",
  configSchema: z
    .object({
      copies: z.number().int().default(3),
      concurrency: operational(z.number().int().default(8)),
      delay_ms: z.number().default(0),
      fail_every: z.number().int().default(0),
    })
    .strict(),
  concurrency: (ctx) => ctx.config.concurrency,
  // stands in for an LLM stage in `run --dry-run`: one "request" per input record (the shard's own)
  estimate: async (_ctx, input) => {
    let n = 0;
    for await (const _ of input) n++;
    return { requests: n, promptTokens: 10 * n, completionTokens: n };
  },
  process: async (record, ctx) => {
    const value = record.value as number;
    if (ctx.config.delay_ms) await new Promise((r) => setTimeout(r, Math.random() * ctx.config.delay_ms));
    if (ctx.config.fail_every && value % ctx.config.fail_every === 0 && process.env.TOY_FAILING === "1") {
      return { failed: { reason: "flaky-service", detail: `value ${value}` } };
    }
    const copies = value % ctx.config.copies;
    // TOY_REJECT_DETAIL changes the rejects alone, the outputs staying the same
    const detail = process.env.TOY_REJECT_DETAIL;
    if (copies === 0)
      return { rejects: [{ id: record.id, reason: "no-copies", record, ...(detail ? { detail } : {}) }] };
    const out: PipelineRecord[] = [];
    for (let i = 0; i < copies; i++) out.push({ id: `${record.id}/${i}`, value, copy: i });
    return { out };
  },
});

export const totalStage = defineStage({
  name: "total",
  description: "sums every value (global)",
  upstream: ["expand"],
  kind: "global",
  configSchema: z.object({}).strict(),
  run: async (ctx, emit) => {
    let sum = 0;
    let n = 0;
    for await (const r of ctx.read("expand")) {
      sum += r.value as number;
      n++;
    }
    await emit.out({ id: "total", sum, n });
  },
});

export const TOY_STAGES = [numbersStage, expandStage, totalStage] as Stage<unknown>[];

/** Runs `run` with the environment variable `name` set to `value` (the toy stages read TOY_*), then unsets it. */
export async function withToyEnv<T>(name: string, value: string, run: () => Promise<T>): Promise<T> {
  process.env[name] = value;
  try {
    return await run();
  } finally {
    delete process.env[name];
  }
}
