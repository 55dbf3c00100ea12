// The stage contract's bookkeeping: per-run state from `open` handed to process/run/summarize and
// released by `close`; `ctx.stat` counters and reject reasons kept in the manifest, exact over a
// failed-then-resumed run and summed over shards; a global stage's returned statistics persisted; and
// Runner.manifestOf, which gives a sharded stage its summary from the union of its shards.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { PipelineRecord } from "../../pipeline/record.js";
import type { Runner } from "../../pipeline/runner.js";
import { defineStage, type Stage } from "../../pipeline/stage.js";
import { makeRunner } from "../support/runner-kit.js";
import { tempDir } from "../support/temp-dir.js";
import { numbersStage } from "../support/toy-stages.js";

/** What one run of `parity` holds: how often it was opened, and the records it saw. */
class ParityRun {
  static opened = 0;
  static closed = 0;
  seen = 0;
  closed = false;
  constructor() {
    ParityRun.opened++;
  }
}

/** values above it fail (a flaky service), while it is set; the config stays the same, so runs resume */
let failOver = -1;

/** Even numbers pass, odd ones are rejected as "odd" (multiples of 5 as "five"); counts them by stat. */
const parityStage = defineStage<Record<string, never>, ParityRun>({
  name: "parity",
  description: "keeps even numbers",
  upstream: ["numbers"],
  kind: "record",
  configSchema: z.object({}).strict(),
  concurrency: () => 4,
  open: () => new ParityRun(),
  close: (run) => {
    run.closed = true;
    ParityRun.closed++;
  },
  process: async (record, ctx, run) => {
    if (run.closed) throw new Error("process after close");
    run.seen++;
    const value = record.value as number;
    // counted, then failed: a failed record's counters must not be kept
    ctx.stat("seen");
    if (failOver >= 0 && value > failOver) {
      return { failed: { reason: "flaky", detail: `value ${value}` } };
    }
    ctx.stat("sum", value);
    if (value % 2 === 0) return { out: [record] };
    return { rejects: [{ id: record.id, reason: value % 5 === 0 ? "five" : "odd", record }] };
  },
  summarize: async (ctx, run) => {
    let kept = 0;
    for await (const _ of ctx.read("parity")) kept++;
    return { kept, seen_this_run: run.seen };
  },
});

/** A global stage whose `run` returns its statistics and counts through ctx.stat. */
const countStage = defineStage<Record<string, never>, { records: PipelineRecord[] }>({
  name: "count",
  description: "counts parity's outputs",
  upstream: ["parity"],
  kind: "global",
  configSchema: z.object({}).strict(),
  open: () => ({ records: [] }),
  run: async (ctx, emit, state) => {
    for await (const r of ctx.read("parity")) state.records.push(r);
    ctx.stat("read", state.records.length);
    await emit.reject({ id: "none", reason: "example", detail: "one reject to count" });
    await emit.out({ id: "count", n: state.records.length });
    return { n: state.records.length };
  },
});

const STAGES = [numbersStage, parityStage, countStage] as Stage<unknown>[];
const YAML = "stages:\n  numbers: {count: 40}\n";

async function oneProcess(): Promise<Runner> {
  const runner = makeRunner(STAGES, { dir: tempDir(), yaml: YAML });
  await runner.run(["count"]);
  return runner;
}

// 0..39: 20 even kept; odd 20 rejected, of which 5, 15, 25, 35 as "five"; sum 780
const EXPECTED = { counters: { seen: 40, sum: 780 }, rejectReasons: { five: 4, odd: 16 } };

describe("stage bookkeeping", () => {
  it("opens one state per run, hands it to process and summarize, and closes it", async () => {
    const before = { opened: ParityRun.opened, closed: ParityRun.closed };
    const runner = await oneProcess();
    expect(ParityRun.opened - before.opened).toBe(1);
    expect(ParityRun.closed - before.closed).toBe(1);
    expect(runner.store("parity").manifest()!.stats).toEqual({ kept: 20, seen_this_run: 40 });
  });

  it("keeps counters and reject reasons in the manifest", async () => {
    const runner = await oneProcess();
    const manifest = runner.store("parity").manifest()!;
    expect(manifest.counters).toEqual(EXPECTED.counters);
    expect(manifest.rejectReasons).toEqual(EXPECTED.rejectReasons);
    const count = runner.store("count").manifest()!;
    expect(count.stats).toEqual({ n: 20 });
    expect(count.counters).toEqual({ read: 20 });
    expect(count.rejectReasons).toEqual({ example: 1 });
  });

  it("counts a failed record only once it succeeds, so a resumed run counts what one run does", async () => {
    const runner = makeRunner(STAGES, { dir: tempDir(), yaml: YAML });
    failOver = 24;
    const closed = ParityRun.closed;
    try {
      await expect(runner.run(["parity"])).rejects.toThrow(/15 records failed/);
    } finally {
      failOver = -1;
    }
    // a run that ends in failure still closes its state
    expect(ParityRun.closed - closed).toBe(1);
    expect(runner.store("parity").manifest()!.state).toBe("partial");
    await runner.run(["parity"]);
    const manifest = runner.store("parity").manifest()!;
    expect(manifest.state).toBe("complete");
    // the 15 failed ones were counted as seen in the first run too: only their committed try counts
    expect(manifest.counters).toEqual(EXPECTED.counters);
    expect(manifest.rejectReasons).toEqual(EXPECTED.rejectReasons);
    expect(manifest.stats).toEqual({ kept: 20, seen_this_run: 15 });
  });

  it("sums a sharded stage's counters and reject reasons, and summarizes its union", async () => {
    const reference = await oneProcess();
    const dir = tempDir();
    const runner = makeRunner(STAGES, { dir, yaml: YAML });
    for (const stage of ["numbers", "parity"]) {
      for (let index = 0; index < 3; index++) await runner.run([stage], { shard: { index, count: 3 } });
    }
    // each shard counted only its own records
    const shard0 = runner.store("parity", { index: 0, count: 3 }).manifest()!;
    expect(shard0.counters!.seen).toBeLessThan(40);

    const merged = (await runner.manifestOf("parity"))!;
    const single = (await reference.manifestOf("parity"))!;
    expect(merged.counts).toEqual(single.counts);
    expect(merged.counters).toEqual(EXPECTED.counters);
    expect(merged.rejectReasons).toEqual(EXPECTED.rejectReasons);
    // the summary of the whole stage, not of one shard; a fresh state has seen nothing
    expect(merged.stats).toEqual({ kept: 20, seen_this_run: 0 });
    expect(single.stats).toEqual({ kept: 20, seen_this_run: 40 });

    // a global stage downstream of the shards runs once, as usual
    await runner.run(["count"]);
    expect((await runner.manifestOf("count"))!.stats).toEqual({ n: 20 });
  });
});
