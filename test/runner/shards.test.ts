// `run --shard K/N` over the toy stages: shards partition the records, their union is exactly a
// one-process run (records, rejects, counts and output hash), a global stage waits for every shard,
// what would mix (another N, a one-process run) is refused with advice, and shards of two
// configurations never make a complete stage: a stale shard starts over on its own files.

import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { UserError } from "../../pipeline/errors.js";
import { type Logger, silentLogger } from "../../pipeline/log.js";
import { shardOfId } from "../../pipeline/runner/shard.js";
import type { Runner } from "../../pipeline/runner.js";
import { writeManifest } from "../../pipeline/store/manifest.js";
import { HEARTBEAT_MS } from "../../pipeline/store/stage-store.js";
import { collect, makeRunner } from "../support/runner-kit.js";
import { tempDir } from "../support/temp-dir.js";
import { TOY_STAGES, withToyEnv } from "../support/toy-stages.js";

const YAML = "stages:\n  numbers: {count: 60}\n";
const lines = (records: unknown[]) => records.map((r) => JSON.stringify(r)).sort();

async function runShards(runner: Runner, stage: string, count: number, skip: number[] = []) {
  for (let index = 0; index < count; index++) {
    if (!skip.includes(index)) await runner.run([stage], { shard: { index, count } });
  }
}

/**
 * Runs `numbers` and shard 0 of 2 of `expand`; returns shard 1's (made, empty) store and shard 0's
 * manifest less its output hash, for a test to plant there as shard 1's.
 */
async function shardZeroToPlant(runner: Runner) {
  await runner.run(["numbers"]);
  await runShards(runner, "expand", 2, [1]);
  const store = runner.store("expand", { index: 1, count: 2 });
  mkdirSync(store.dir, { recursive: true });
  const { outputHash: _, ...shard0 } = runner.store("expand", { index: 0, count: 2 }).manifest()!;
  return { store, shard0 };
}

async function oneProcess(): Promise<Runner> {
  const runner = makeRunner(TOY_STAGES, { dir: tempDir(), yaml: YAML });
  await runner.run(["total"]);
  return runner;
}

describe("shards", () => {
  it("partition the records by id: their union is a one-process run, hash and counts included", async () => {
    const reference = await oneProcess();
    const dir = tempDir();
    const runner = makeRunner(TOY_STAGES, { dir, yaml: YAML });
    await runShards(runner, "numbers", 3);
    await runShards(runner, "expand", 3);

    // each shard holds only records whose id hashes to it, and none is in two shards
    const seen = new Set<string>();
    for (let index = 0; index < 3; index++) {
      const store = runner.store("expand", { index, count: 3 });
      const inputs = (await collect(store.read({ rejects: true }))).map((r) => r.id as string);
      for (const out of await collect(store.read())) inputs.push((out.id as string).replace(/\/\d+$/, ""));
      for (const id of inputs) expect(shardOfId(id, 3)).toBe(index);
      for (const id of new Set(inputs)) {
        expect(seen.has(id)).toBe(false);
        seen.add(id);
      }
    }
    expect(seen.size).toBe(60);

    for (const stage of ["numbers", "expand"]) {
      const sharded = runner.status(stage);
      const single = reference.status(stage);
      expect(sharded.state).toBe("complete");
      expect(sharded.shards!.map((s) => s.state)).toEqual(["done", "done", "done"]);
      expect(sharded.manifest!.counts).toEqual(single.manifest!.counts);
      expect(sharded.manifest!.outputHash).toBe(single.manifest!.outputHash);
      expect(lines(await collect(runner.read(stage)))).toEqual(lines(await collect(reference.read(stage))));
      expect(lines(await collect(runner.read(stage, { rejects: true })))).toEqual(
        lines(await collect(reference.read(stage, { rejects: true }))),
      );
    }
    // in the same order too, where one process commits in input order (numbers runs one at a time):
    // a global stage's "first copy wins" (dedup) then keeps the same copies
    const order = async (r: Runner) => (await collect(r.read("numbers"))).map((x) => x.id);
    expect(await order(runner)).toEqual(await order(reference));
    // the global stage reads the union and sees what one process saw
    await runner.run(["total"]);
    expect(await collect(runner.read("total"))).toEqual(await collect(reference.read("total")));
    expect(runner.status("total").manifest!.outputHash).toBe(reference.status("total").manifest!.outputHash);
    // and a whole-pipeline run afterwards finds everything up to date
    const again = await makeRunner(TOY_STAGES, { dir, yaml: YAML }).run(["total"]);
    expect(again.map((r) => r.action)).toEqual(["skipped", "skipped", "skipped"]);
  });

  it("index a sharded stage as one: every shard's outputs in the order read yields, each read back", async () => {
    const dir = tempDir();
    // records finishing out of order: a shard's file is not in its input's order
    const runner = makeRunner(TOY_STAGES, { dir, yaml: `${YAML}  expand: {delay_ms: 20}\n` });
    await runShards(runner, "numbers", 3);
    await runShards(runner, "expand", 3);
    const all = await collect(runner.read("expand"));
    const sorted = [...all].sort((a, b) => Number(/\d+/.exec(a.id)![0]) - Number(/\d+/.exec(b.id)![0]));
    expect(all.map((r) => r.id)).not.toEqual(sorted.map((r) => r.id));
    const index = await runner.index("expand", ["id"]);
    expect(index.rows.map((r) => r.id)).toEqual(all.map((r) => r.id));
    expect(index.rows.every((r) => r.fields.id === r.id)).toBe(true);
    expect(await collect(index.records(index.rows))).toEqual(all);
    // the last of each shard's, in the other order: those records, each read from its own shard
    const shardOf = (id: string) => shardOfId(id.replace(/\/\d+$/, ""), 3);
    const some = [2, 1, 0].map((k) => index.rows.findLast((r) => shardOf(r.id) === k)!);
    expect(await collect(index.records(some))).toEqual(some.map((r) => all.find((a) => a.id === r.id)));
  });

  it("a global stage refuses to start before every shard is done, naming the missing ones", async () => {
    const dir = tempDir();
    const runner = makeRunner(TOY_STAGES, { dir, yaml: YAML });
    await runner.run(["numbers"]);
    await runShards(runner, "expand", 4, [1, 3]);
    const status = runner.status("expand");
    expect(status.state).toBe("partial");
    expect(status.shards!.map((s) => s.state)).toEqual(["done", "not started", "done", "not started"]);
    for (const only of [true, false]) {
      const refused = runner.run(["total"], { only });
      await expect(refused).rejects.toThrow(UserError);
      await expect(refused).rejects.toThrow(/expand.*4 shards: 2 done, 2 not started \(1, 3\)/);
      await expect(refused).rejects.toThrow("pnpm pipeline run expand --only --shard 1/4");
      await expect(refused).rejects.toThrow("pnpm pipeline run expand --only --shard 3/4");
    }
    expect(runner.status("total").state).toBe("not started");
    await runShards(runner, "expand", 4, [0, 2]);
    await runner.run(["total"], { only: true });
    expect(runner.status("total").state).toBe("complete");
  });

  it("refuses a global stage, another N and a one-process run's outputs; mixed configurations never complete", async () => {
    const dir = tempDir();
    const runner = makeRunner(TOY_STAGES, { dir, yaml: YAML });
    await runner.run(["numbers"]);
    await expect(runner.run(["total"], { shard: { index: 0, count: 2 } })).rejects.toThrow(
      /--shard 0\/2: total is a global stage/,
    );
    await runner.run(["expand"], { shard: { index: 0, count: 3 } });

    const otherN = runner.run(["expand"], { shard: { index: 1, count: 2 } });
    await expect(otherN).rejects.toThrow(/expand was started in 3 shards, not 2/);
    await expect(otherN).rejects.toThrow("pnpm pipeline reset expand");

    // a shard of another configuration runs (on its own files), warned that the others differ...
    const mixed = makeRunner(TOY_STAGES, { dir, yaml: YAML, sets: ["stages.expand.copies=4"] });
    const warnings: string[] = [];
    (mixed as { log: Logger }).log = { ...silentLogger, warn: (m) => warnings.push(m) };
    await mixed.run(["expand"], { shard: { index: 1, count: 3 } });
    expect(warnings.join("\n")).toMatch(/expand shard 1\/3: shard 0 ran with another configuration/);
    // ...and each configuration sees the other's shard as stale: the stage is complete for neither,
    // so nothing after it reads a mix
    expect(runner.status("expand").shards!.map((s) => s.state)).toEqual(["done", "stale", "not started"]);
    expect(mixed.status("expand").shards!.map((s) => s.state)).toEqual(["stale", "done", "not started"]);
    await runner.run(["expand"], { shard: { index: 2, count: 3 } });
    await expect(runner.run(["total"], { only: true })).rejects.toThrow(
      /expand.*3 shards: 2 done, 1 stale \(1\)/,
    );

    // a one-process run does not take over unfinished shards, nor shards a one-process run's outputs
    await expect(runner.run(["expand"])).rejects.toThrow(/expand is being run in shards and is partial/);
    runner.reset("expand");
    await runner.run(["expand"], { only: true });
    await expect(runner.run(["expand"], { shard: { index: 0, count: 2 } })).resolves.toMatchObject([
      { action: "skipped" },
    ]);
    // a one-process run left partial (failed records) cannot be finished by shards
    runner.reset("expand");
    const failing = makeRunner(TOY_STAGES, { dir, yaml: `${YAML}  expand: {fail_every: 7}\n` });
    await withToyEnv("TOY_FAILING", "1", async () => {
      await expect(failing.run(["expand"], { only: true })).rejects.toThrow(/records failed/);
    });
    await expect(failing.run(["expand"], { shard: { index: 0, count: 2 } })).rejects.toThrow(
      /expand has outputs of a one-process run \(partial/,
    );
  });

  it("staleness crosses shards: a new upstream or configuration makes them stale, downstream too", async () => {
    const dir = tempDir();
    const runner = makeRunner(TOY_STAGES, { dir, yaml: YAML });
    await runner.run(["numbers"]);
    await runShards(runner, "expand", 2);
    await runner.run(["total"]);
    expect(runner.status("total").state).toBe("complete");
    // a dry run of the complete sharded stage, forced, estimates it rather than refusing it
    const dry = await runner.run(["expand"], { dryRun: true, force: true });
    expect(dry.map((r) => [r.stage, r.action])).toEqual([
      ["numbers", "skipped"],
      ["expand", "estimated"],
    ]);

    // one shard recomputed to the same records: the union hashes the same, nothing downstream is stale
    await runner.run(["expand"], { shard: { index: 1, count: 2 }, force: true });
    expect(runner.status("total").state).toBe("complete");

    // the source changes: every shard of expand is stale, and total with them
    const bigger = makeRunner(TOY_STAGES, { dir, yaml: "stages:\n  numbers: {count: 62}\n" });
    await bigger.run(["numbers"]);
    expect(bigger.status("expand").state).toBe("stale");
    // recomputing numbers marked every shard of expand, as it marks a one-process stage
    expect(bigger.status("expand").shards!.map((s) => s.reason)).toEqual([
      "upstream numbers was reset",
      "upstream numbers was reset",
    ]);
    expect(bigger.status("total").state).toBe("stale");
    await runShards(bigger, "expand", 2);
    expect(bigger.status("expand").state).toBe("complete");
    expect(bigger.status("total").state).toBe("stale");
    await bigger.run(["total"]);
    expect((await collect(bigger.read("total")))[0]).toMatchObject({ n: 61 }); // value 61 adds one copy;
  });

  it("a shard whose configuration changed starts over on its own files, as a stale stage does", async () => {
    const reference = makeRunner(TOY_STAGES, { dir: tempDir(), yaml: "stages:\n  numbers: {count: 61}\n" });
    await reference.run(["total"]);
    const dir = tempDir();
    const runner = makeRunner(TOY_STAGES, { dir, yaml: YAML });
    await runShards(runner, "numbers", 2);
    await runShards(runner, "expand", 2);
    const changed = makeRunner(TOY_STAGES, { dir, yaml: "stages:\n  numbers: {count: 61}\n" });
    expect(changed.status("numbers")).toMatchObject({ state: "stale" });
    expect(changed.status("numbers").shards!.map((s) => s.reason)).toEqual([
      "its configuration changed: stages.numbers.count 60 -> 61",
      "its configuration changed: stages.numbers.count 60 -> 61",
    ]);
    expect(changed.status("expand").state).toBe("stale");
    // no reset by hand: shard 0 recomputes its own records; shard 1's files are left as they are
    const shard1 = runner.store("numbers", { index: 1, count: 2 }).manifest()!;
    await changed.run(["numbers"], { shard: { index: 0, count: 2 } });
    expect(changed.status("numbers").shards!.map((s) => s.state)).toEqual(["done", "stale"]);
    expect(changed.store("numbers", { index: 1, count: 2 }).manifest()).toEqual(shard1);
    // the stages after it refuse a mix of configurations, naming the shard to rerun
    await expect(changed.run(["expand"], { shard: { index: 0, count: 2 } })).rejects.toThrow(
      /numbers to be complete, but it is partial \(2 shards: 1 done, 1 stale \(1\); run `pnpm pipeline run numbers --only --shard 1\/2/,
    );
    await changed.run(["numbers"], { shard: { index: 1, count: 2 } });
    await runShards(changed, "expand", 2);
    await changed.run(["total"]);
    expect(changed.status("expand").manifest!.counts.in).toBe(61);
    expect(changed.status("total").manifest!.outputHash).toBe(reference.status("total").manifest!.outputHash);
  });

  it("a shard running on another machine is believed while its heartbeat is fresh, then shown failed", async () => {
    const dir = tempDir();
    const runner = makeRunner(TOY_STAGES, { dir, yaml: YAML });
    const { store, shard0: done } = await shardZeroToPlant(runner);
    // shard 0's manifest as shard 1's, minus what shard 1 has not done
    const { inputCheck: _, ...shard0 } = done;
    const elsewhere = {
      ...shard0,
      counts: { in: 0, out: 0, rejected: 0, failed: 0 },
      state: "running" as const,
      pid: process.pid, // alive here, but it is another machine's pid
      host: "another-node",
      shard: { index: 1, count: 2 },
    };
    writeManifest(store.dir, { ...elsewhere, updatedAt: new Date().toISOString() });
    expect(runner.status("expand")).toMatchObject({ state: "running" });
    expect(runner.status("expand").shards![1]).toMatchObject({
      state: "running",
      reason: `process ${process.pid} on another-node`,
    });
    await expect(runner.run(["total"], { only: true })).rejects.toThrow(/1 running \(1\)/);

    writeManifest(store.dir, {
      ...elsewhere,
      updatedAt: new Date(Date.now() - 2 * HEARTBEAT_MS).toISOString(),
    });
    expect(runner.status("expand").shards![1]).toMatchObject({
      state: "failed",
      reason: `process ${process.pid} on another-node died`,
      command: `pnpm pipeline run expand --only --shard 1/2 --config ${join(dir, "config.yaml")} --data-dir ${join(dir, "data")}`,
    });
    await runner.run(["expand"], { shard: { index: 1, count: 2 } });
    expect(runner.status("expand").state).toBe("complete");
  });

  it("a dry run of one shard estimates that shard's records only", async () => {
    const dir = tempDir();
    const runner = makeRunner(TOY_STAGES, { dir, yaml: YAML });
    await runner.run(["numbers"]);
    const [whole] = await runner.run(["expand"], { only: true, dryRun: true });
    expect(whole!.estimate!.requests).toBe(60);
    const requests: number[] = [];
    for (let index = 0; index < 3; index++) {
      const [shard] = await runner.run(["expand"], { dryRun: true, shard: { index, count: 3 } });
      const own = Array.from({ length: 60 }, (_, i) => `n:${i}`).filter((id) => shardOfId(id, 3) === index);
      expect(shard).toMatchObject({ action: "estimated", estimate: { requests: own.length } });
      requests.push(shard!.estimate!.requests);
    }
    expect(requests.reduce((a, b) => a + b, 0)).toBe(60);
    // nothing was run
    expect(runner.status("expand").state).toBe("not started");
  });

  it("the command that reruns a shard repeats the --config and --set it ran with, never a key", async () => {
    const dir = tempDir();
    const config = join(dir, "config.yaml");
    const data = join(dir, "data");
    const sets = ["stages.expand.fail_every=7"];
    // a key given with --set is neither recorded nor repeated
    const runner = makeRunner(TOY_STAGES, {
      dir,
      yaml: YAML,
      sets: [...sets, "llm.scorer.api_key=sk-secret"],
    });
    await runner.run(["numbers"]);
    await withToyEnv("TOY_FAILING", "1", async () => {
      await expect(runner.run(["expand"], { shard: { index: 0, count: 2 } })).rejects.toThrow(
        /records failed/,
      );
    });
    const manifest = runner.store("expand", { index: 0, count: 2 }).manifest()!;
    expect(manifest.invocation).toEqual({ config, sets });
    expect(JSON.stringify(manifest)).not.toContain("sk-secret");
    // judged by a process given the same configuration another way (in the file, no --set): the
    // failed shard is rerun as it ran; the one that never ran, with what this process was given
    const other = makeRunner(TOY_STAGES, { dir, yaml: `${YAML}  expand: {fail_every: 7}\n` });
    const rerun = `pnpm pipeline run expand --only --shard 0/2 --config ${config} --set stages.expand.fail_every=7 --data-dir ${data}`;
    const [failed, missing] = other.status("expand").shards!;
    expect(failed).toMatchObject({ state: "failed", command: rerun });
    expect(missing).toMatchObject({
      state: "not started",
      command: `pnpm pipeline run expand --only --shard 1/2 --config ${config} --data-dir ${data}`,
    });
    // the global stage's refusal names the same command
    await expect(other.run(["total"], { only: true })).rejects.toThrow(rerun);
    // a process given the --set gives it to a shard that never ran too
    expect(runner.status("expand").shards![1]!.command).toBe(
      `pnpm pipeline run expand --only --shard 1/2 --config ${config} --set stages.expand.fail_every=7 --data-dir ${data}`,
    );
  });

  it("a stage switched off is not run as a shard either", async () => {
    const switchable = [TOY_STAGES[0]!, { ...TOY_STAGES[1]!, switchable: true }, TOY_STAGES[2]!];
    const runner = makeRunner(switchable, { dir: tempDir(), yaml: `${YAML}  expand: {enabled: false}\n` });
    await runner.run(["numbers"]);
    await expect(runner.run(["expand"], { shard: { index: 0, count: 2 } })).rejects.toThrow(
      /expand is switched off \(stages\.expand\.enabled: false/,
    );
    expect(runner.shardCount("expand")).toBeUndefined();
  });

  it("a shard whose input is not what its earlier run saw is refused with the shard's own --force", async () => {
    const dir = tempDir();
    const runner = makeRunner(TOY_STAGES, { dir, yaml: YAML });
    // shard 0's input fingerprint in shard 1's manifest: shard 1's input differs from it
    const { store, shard0 } = await shardZeroToPlant(runner);
    writeManifest(store.dir, { ...shard0, state: "partial", shard: { index: 1, count: 2 } });
    await expect(runner.run(["expand"], { shard: { index: 1, count: 2 } })).rejects.toThrow(
      `Run \`pnpm pipeline run expand --only --shard 1/2 --config ${join(dir, "config.yaml")} --data-dir ${join(dir, "data")} --force\` to recompute it`,
    );
    await runner.run(["expand"], { shard: { index: 1, count: 2 }, force: true });
    expect(runner.status("expand").state).toBe("complete");
  });
});
