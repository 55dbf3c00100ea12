import { existsSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { InterruptedError, UserError } from "../../pipeline/errors.js";
import { defineStage, type Stage } from "../../pipeline/stage.js";
import { collect, makeRunner } from "../support/runner-kit.js";
import { tempDir } from "../support/temp-dir.js";
import { numbersStage, TOY_STAGES, withToyEnv } from "../support/toy-stages.js";

const ids = (records: { id: string }[]) => records.map((r) => r.id).sort();

describe("runner", () => {
  it("runs the named stage and every upstream stage, with rejects counted", async () => {
    const dir = tempDir();
    const runner = makeRunner(TOY_STAGES, { dir, yaml: "stages:\n  numbers: {count: 30}\n" });
    const reports = await runner.run(["total"]);
    expect(reports.map((r) => [r.stage, r.action])).toEqual([
      ["numbers", "ran"],
      ["expand", "ran"],
      ["total", "ran"],
    ]);
    const expand = runner.status("expand");
    expect(expand.state).toBe("complete");
    // values 0..29: value%3==0 rejected (10), 1 -> one copy (10), 2 -> two copies (10)
    expect(expand.manifest!.counts).toEqual({ in: 30, out: 30, rejected: 10, failed: 0 });
    const rejects = await collect(runner.store("expand").read({ rejects: true }));
    expect(rejects).toHaveLength(10);
    expect(rejects[0]).toMatchObject({ reason: "no-copies" });
    const [total] = await collect(runner.store("total").read());
    const expected = Array.from({ length: 30 }, (_, v) => v * (v % 3)).reduce((a, b) => a + b, 0);
    expect(total).toEqual({ id: "total", sum: expected, n: 30 });
  });

  it("starts a record-wise stage's records before its input is counted", async () => {
    // the count (a dialogue stage's pass over the filter's output) comes only once every record is done
    let processed = 0;
    let counted!: (n: number) => void;
    const counting = new Promise<number>((resolve) => (counted = resolve));
    const slowCount = defineStage({
      name: "slow-count",
      description: "its input size is known only at the end",
      upstream: ["numbers"],
      kind: "record",
      configSchema: z.object({}).strict(),
      inputSize: () => counting,
      process: async (record) => {
        if (++processed === 12) counted(12);
        return { out: [record] };
      },
    });
    const runner = makeRunner([numbersStage, slowCount] as Stage<unknown>[], {
      dir: tempDir(),
      yaml: "stages:\n  numbers: {count: 12}\n",
    });
    await runner.run(["slow-count"]);
    expect(runner.status("slow-count").manifest!.counts).toMatchObject({ in: 12, out: 12 });
  });

  it("skips complete stages and recomputes a stage whose config changed, then its downstream", async () => {
    const dir = tempDir();
    await makeRunner(TOY_STAGES, { dir }).run(["total"]);
    const again = await makeRunner(TOY_STAGES, { dir }).run(["total"]);
    expect(again.map((r) => r.action)).toEqual(["skipped", "skipped", "skipped"]);

    const changed = makeRunner(TOY_STAGES, { dir, sets: ["stages.expand.copies=4"] });
    expect(changed.status("numbers").state).toBe("complete");
    expect(changed.status("expand")).toMatchObject({
      state: "stale",
      reason: "its configuration changed: stages.expand.copies 3 -> 4",
    });
    expect(changed.status("total").state).toBe("stale");
    const reports = await changed.run(["total"]);
    expect(reports.map((r) => r.action)).toEqual(["skipped", "ran", "ran"]);
    expect(changed.status("expand").manifest!.counts.rejected).toBe(13); // multiples of 4 in 0..49
  });

  it("--only refuses to run a stage whose upstream is not complete", async () => {
    const runner = makeRunner(TOY_STAGES, { dir: tempDir() });
    await expect(runner.run(["expand"], { only: true })).rejects.toThrow(/needs numbers to be complete/);
  });

  it("--force recomputes the named stage; downstream is stale only if what it reads came out different", async () => {
    const dir = tempDir();
    await makeRunner(TOY_STAGES, { dir }).run(["total"]);
    const runner = makeRunner(TOY_STAGES, { dir });
    // the same outputs and rejects: total read exactly this, and stays valid
    await runner.run(["expand"], { force: true, only: true });
    expect(runner.status("expand").state).toBe("complete");
    expect(runner.status("total").state).toBe("complete");
    expect((await runner.run(["total"])).map((r) => r.action)).toEqual(["skipped", "skipped", "skipped"]);
    // the same outputs, other rejects: stale all the same
    await withToyEnv("TOY_REJECT_DETAIL", "counted again", async () => {
      await runner.run(["expand"], { force: true, only: true });
    });
    expect(runner.status("expand").manifest!.outputHash).toBe(
      makeRunner(TOY_STAGES, { dir }).status("total").manifest!.upstream.expand,
    );
    expect(runner.status("total")).toMatchObject({ state: "stale", reason: "upstream expand was forced" });
    // and without the mark (a shard rerun marks nothing downstream), the other rejects still count
    const store = runner.store("total");
    const { staleReason: _mark, ...unmarked } = store.manifest()!;
    store.saveManifest(unmarked);
    expect(runner.status("total")).toMatchObject({ state: "stale", reason: "upstream expand changed" });
    expect((await runner.run(["total"])).map((r) => r.action)).toEqual(["skipped", "skipped", "ran"]);
  });

  it("a reset stage recomputed to the same content leaves its downstream valid, transitively", async () => {
    const dir = tempDir();
    const runner = makeRunner(TOY_STAGES, { dir });
    await runner.run(["total"]);
    runner.reset("numbers");
    expect(runner.status("total").state).toBe("stale");
    expect((await runner.run(["total"])).map((r) => r.action)).toEqual(["ran", "skipped", "skipped"]);
    expect(runner.status("total").state).toBe("complete");
  });

  it("a partial stage keeps a reset's mark though its upstream came back the same (it starts over)", async () => {
    const dir = tempDir();
    const runner = makeRunner(TOY_STAGES, { dir, yaml: "stages:\n  expand: {fail_every: 7}\n" });
    await withToyEnv("TOY_FAILING", "1", async () => {
      await expect(runner.run(["expand"])).rejects.toThrow(/records failed/);
    });
    expect(runner.status("expand").state).toBe("partial");
    runner.reset("numbers");
    await runner.run(["numbers"]);
    expect(runner.status("expand")).toMatchObject({ state: "stale", reason: "upstream numbers was reset" });
  });

  it("a manifest from before contents were recorded keeps a reset's staleness", async () => {
    const dir = tempDir();
    const runner = makeRunner(TOY_STAGES, { dir });
    await runner.run(["total"]);
    const store = runner.store("expand");
    const { upstreamContent: _dropped, ...older } = store.manifest()!;
    store.saveManifest(older);
    runner.reset("numbers");
    // expand has no record of what it read, so it runs again; total has, and expand came out the same
    expect((await runner.run(["total"])).map((r) => r.action)).toEqual(["ran", "ran", "skipped"]);
  });

  it("reset removes outputs and marks downstream stale", async () => {
    const dir = tempDir();
    const runner = makeRunner(TOY_STAGES, { dir });
    await runner.run(["total"]);
    runner.reset("numbers");
    expect(runner.status("numbers").state).toBe("not started");
    expect(runner.status("expand").state).toBe("stale");
    expect(await collect(runner.store("numbers").read())).toEqual([]);
    // transitively: total reads expand, which reads numbers
    expect(runner.status("total").state).toBe("stale");
  });

  it("refuses a stage list that names a stage before the stage it reads", () => {
    expect(() => makeRunner([...TOY_STAGES].reverse(), { dir: tempDir() })).toThrow(
      /reads .*, which is not listed before it/,
    );
  });

  it("keeps failed records out of the done set and retries them on the next run", async () => {
    const dir = tempDir();
    const runner = makeRunner(TOY_STAGES, { dir, yaml: "stages:\n  expand: {fail_every: 7}\n" });
    await withToyEnv("TOY_FAILING", "1", async () => {
      await expect(runner.run(["expand"])).rejects.toThrow(
        /8 records failed: 8 x flaky-service \(e\.g\. value 0\)/,
      );
    });
    const partial = runner.status("expand");
    expect(partial.state).toBe("partial");
    expect(partial.manifest!.counts.failed).toBe(8);
    await runner.run(["expand"]);
    expect(runner.status("expand").manifest!.counts).toMatchObject({ in: 50, failed: 0 });
    const fresh = makeRunner(TOY_STAGES, { dir: tempDir() });
    await fresh.run(["expand"]);
    expect(ids(await collect(runner.store("expand").read()))).toEqual(
      ids(await collect(fresh.store("expand").read())),
    );
    expect(runner.status("expand").manifest!.outputHash).toBe(fresh.status("expand").manifest!.outputHash);
  });

  it("an abort lets in-flight records finish, saves them, and the next run resumes", async () => {
    const dir = tempDir();
    const runner = makeRunner(TOY_STAGES, {
      dir,
      yaml: "stages:\n  numbers: {count: 400}\n  expand: {delay_ms: 20}\n",
    });
    await runner.run(["numbers"]);
    const controller = new AbortController();
    // abort once the stage has committed something, however loaded the machine is
    const parts = join(dir, "data", "expand", "parts");
    const poll = setInterval(() => {
      const files = existsSync(parts) ? readdirSync(parts) : [];
      if (files.some((f) => statSync(join(parts, f)).size > 0)) {
        clearInterval(poll);
        controller.abort();
      }
    }, 2);
    await expect(runner.run(["expand"], { signal: controller.signal })).rejects.toBeInstanceOf(
      InterruptedError,
    );
    clearInterval(poll);
    const partial = runner.status("expand");
    expect(partial.state).toBe("partial");
    expect(partial.manifest!.counts.in).toBeGreaterThan(0);
    expect(partial.manifest!.counts.in).toBeLessThan(400);
    await runner.run(["expand"]);
    const out = await collect(runner.store("expand").read());
    expect(new Set(out.map((r) => r.id)).size).toBe(out.length);
    expect(runner.status("expand").manifest!.counts).toMatchObject({ in: 400, out: 399 }); // 133 values give 1 copy, 133 give 2
  });

  it("names an unknown stage section and an unknown key with file and line", () => {
    const dir = tempDir();
    expect(() => makeRunner(TOY_STAGES, { dir, yaml: "stages:\n  nubmers: {}\n" })).toThrow(
      /stages\.nubmers \(line 3\): unknown stage/,
    );
    expect(() => makeRunner(TOY_STAGES, { dir, yaml: "stages:\n  expand:\n    copys: 2\n" })).toThrow(
      /config\.yaml:\n {2}stages\.expand\.copys \(line 4\): unknown key/,
    );
    expect(() => makeRunner(TOY_STAGES, { dir, yaml: "stages:\n  expand:\n    copies: three\n" })).toThrow(
      /stages\.expand\.copies \(line 4\): Invalid input: expected number/,
    );
  });

  it("rejects an unknown stage name with the list of stages", () => {
    const runner = makeRunner(TOY_STAGES, { dir: tempDir() });
    expect(() => runner.stage("filtr")).toThrow(UserError);
    expect(() => runner.stage("filtr")).toThrow(/Stages are: numbers, expand, total/);
  });

  it("--limit is part of a source stage's fingerprint", async () => {
    const dir = tempDir();
    await makeRunner(TOY_STAGES, { dir, limit: 5 }).run(["numbers"]);
    const full = makeRunner(TOY_STAGES, { dir });
    expect(full.status("numbers").state).toBe("stale");
    await full.run(["numbers"]);
    expect(full.status("numbers").manifest!.counts.out).toBe(50);
  });
});

describe("runner under concurrent use, aborts and stage bugs", () => {
  it("reset and --force refuse while another process runs the stage, and delete nothing", async () => {
    const dir = tempDir();
    const runner = makeRunner(TOY_STAGES, { dir });
    await runner.run(["expand"]);
    const lock = join(dir, "data", "expand", "lock");
    writeFileSync(lock, "1"); // pid 1 is alive: another run holds the stage
    expect(() => runner.reset("expand")).toThrow(/being run by process 1/);
    await expect(runner.run(["expand"], { force: true })).rejects.toThrow(/being run by process 1/);
    expect(() => runner.reset("numbers")).not.toThrow(); // numbers itself is free...
    rmSync(lock);
    expect(runner.status("expand").state).toBe("stale"); // ...and its reset marks expand stale
    expect((await collect(runner.store("expand").read())).length).toBe(49);
  });

  it("--dry-run estimates the first LLM stage and changes nothing", async () => {
    const dir = tempDir();
    await makeRunner(TOY_STAGES, { dir }).run(["total"]);
    const changed = makeRunner(TOY_STAGES, { dir, sets: ["stages.expand.copies=4"] });
    const reports = await changed.run(["total"], { dryRun: true, force: true });
    expect(reports.map((r) => [r.stage, r.action])).toEqual([
      ["numbers", "skipped"],
      ["expand", "estimated"],
    ]);
    expect(reports[1]!.estimate).toMatchObject({ requests: 50, promptTokens: 500 });
    expect(changed.status("expand").state).toBe("stale");
    expect(changed.status("numbers").state).toBe("complete");
    expect((await collect(changed.store("expand").read())).length).toBe(49);
  });

  it("--dry-run --force estimates a complete stage it names, and changes nothing", async () => {
    const dir = tempDir();
    await makeRunner(TOY_STAGES, { dir }).run(["total"]);
    const runner = makeRunner(TOY_STAGES, { dir });
    const plain = await runner.run(["expand"], { dryRun: true });
    expect(plain.map((r) => r.action)).toEqual(["skipped", "skipped"]);
    const forced = await runner.run(["expand"], { dryRun: true, force: true });
    expect(forced.map((r) => [r.stage, r.action])).toEqual([
      ["numbers", "skipped"],
      ["expand", "estimated"],
    ]);
    expect(forced[1]!.estimate).toMatchObject({ requests: 50 });
    expect(runner.status("expand").state).toBe("complete");
    expect(runner.status("total").state).toBe("complete");
  });

  it("a global stage that returns early on abort is not committed", async () => {
    const controller = new AbortController();
    const early = defineStage({
      name: "early",
      description: "stops at the 10th record when aborted",
      upstream: ["numbers"],
      kind: "global",
      configSchema: z.object({}).strict(),
      run: async (ctx, emit) => {
        let i = 0;
        for await (const r of ctx.read("numbers")) {
          if (++i === 10) controller.abort();
          if (ctx.signal.aborted) return;
          await emit.out(r);
        }
      },
    });
    const runner = makeRunner([numbersStage, early] as Stage<unknown>[], { dir: tempDir() });
    await runner.run(["numbers"]);
    await expect(runner.run(["early"], { signal: controller.signal })).rejects.toBeInstanceOf(
      InterruptedError,
    );
    expect(runner.status("early").state).toBe("partial");
    expect(await collect(runner.store("early").read())).toEqual([]);
    await runner.run(["early"]);
    expect((await collect(runner.store("early").read())).length).toBe(50);
  });

  it("a stage bug stops the run with its message, leaves the stage partial and unlocked", async () => {
    const buggy = defineStage({
      name: "buggy",
      description: "emits a record without an id",
      upstream: ["numbers"],
      kind: "record",
      configSchema: z.object({}).strict(),
      concurrency: () => 4,
      process: async (r) => ({ out: [{ value: r.value } as never] }),
    });
    const runner = makeRunner([numbersStage, buggy] as Stage<unknown>[], { dir: tempDir() });
    await expect(runner.run(["buggy"])).rejects.toThrow(/emitted a record without a string id for input n:0/);
    const status = runner.status("buggy");
    expect(status.state).toBe("partial");
    expect(status.reason).toMatch(/without a string id/);
    await expect(runner.run(["buggy"])).rejects.toThrow(/without a string id/); // not "being run by"
  });

  it("an abort between stages is an interruption, not a silent success", async () => {
    const controller = new AbortController();
    controller.abort();
    const runner = makeRunner(TOY_STAGES, { dir: tempDir() });
    await expect(runner.run(["expand"], { signal: controller.signal })).rejects.toThrow(
      /interrupted before numbers/,
    );
  });

  it("a stage may read only its upstream stages", async () => {
    const nosy = defineStage({
      name: "nosy",
      description: "reads a stage it does not depend on",
      upstream: ["expand"],
      kind: "global",
      configSchema: z.object({}).strict(),
      run: async (ctx) => {
        for await (const _ of ctx.read("numbers")) break;
      },
    });
    const runner = makeRunner([...TOY_STAGES, nosy] as Stage<unknown>[], { dir: tempDir() });
    await expect(runner.run(["nosy"])).rejects.toThrow(
      /read stage numbers, which is not one of its upstream stages/,
    );
  });

  it("names a bad value given with --set as such", () => {
    expect(() => makeRunner(TOY_STAGES, { dir: tempDir(), sets: ["stages.expand.copies=many"] })).toThrow(
      /stages\.expand\.copies \(from --set\): Invalid input/,
    );
  });
});

describe("resume safety", () => {
  it("refuses to resume when a custom input no longer yields what the earlier run saw", async () => {
    let ids = Array.from({ length: 300 }, (_, i) => `r${i}`);
    const controller = new AbortController();
    const shifty = defineStage({
      name: "shifty",
      description: "reads from a list the test changes between runs",
      upstream: [],
      kind: "record",
      configSchema: z.object({}).strict(),
      concurrency: () => 4,
      input: async function* () {
        for (const id of ids) yield { id };
      },
      process: async (record) => {
        await new Promise((r) => setTimeout(r, 2));
        if (record.id === "r100") controller.abort();
        return { out: [record] };
      },
    });
    const runner = makeRunner([shifty] as Stage<unknown>[], { dir: tempDir() });
    await expect(runner.run(["shifty"], { signal: controller.signal })).rejects.toBeInstanceOf(
      InterruptedError,
    );
    ids = [...ids].reverse();
    await expect(runner.run(["shifty"])).rejects.toThrow(/is not what an earlier run of it saw .* --force/);
    ids = [...ids].reverse();
    await runner.run(["shifty"]);
    expect((await collect(runner.store("shifty").read())).length).toBe(300);
  });
});
