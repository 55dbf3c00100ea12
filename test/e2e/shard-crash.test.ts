// kill -9 one shard mid-run, again and again: `status` shows it failed with the command that reruns
// it, and once it is rerun alone the union of the shards is exactly a one-process run.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readEntries } from "../../pipeline/store/parts.js";
import { runKillableChild } from "../support/killable-child.js";
import { collect, makeRunner } from "../support/runner-kit.js";
import { tempDir } from "../support/temp-dir.js";
import { toyCli } from "../support/toy-cli-kit.js";
import { TOY_STAGES } from "../support/toy-stages.js";

const CHILD_YAML = "stages:\n  numbers: {count: 4000}\n  expand: {delay_ms: 12, concurrency: 4}\n";
const CHILD = new URL("../support/crash-child.ts", import.meta.url).pathname;

/** Runs shard `spec` of expand in a child; SIGKILLs it `killAfterMs` after its parts appear. */
function runShardChild(dir: string, spec: string, killAfterMs?: number): Promise<"done" | "killed"> {
  const parts = join(dir, "data", "expand", "shards", spec.replace("/", "-of-"), "parts");
  return runKillableChild(CHILD, [dir, spec], { watch: parts, killAfterMs });
}

const sorted = (records: unknown[]) => records.map((r) => JSON.stringify(r)).sort();

describe("a shard killed with -9", () => {
  it("shows failed with its command, and rerun alone gives the one-process run's union", async () => {
    const reference = makeRunner(TOY_STAGES, { dir: tempDir(), yaml: "stages:\n  numbers: {count: 4000}\n" });
    await reference.run(["expand"]);

    const dir = tempDir();
    const runner = makeRunner(TOY_STAGES, { dir, yaml: CHILD_YAML });
    await runner.run(["numbers"]);
    expect(await runShardChild(dir, "0/2")).toBe("done");

    let kills = 0;
    for (let attempt = 0; attempt < 12 && kills < 4; attempt++) {
      if ((await runShardChild(dir, "1/2", 100 + Math.random() * 600)) === "killed") kills++;
      else break;
      const status = runner.status("expand");
      expect(status.state).toBe("partial");
      expect(status.shards![0]!.state).toBe("done");
      expect(status.shards![1]).toMatchObject({
        state: "failed",
        reason: expect.stringMatching(/^process \d+ on .* died$/),
        command: `pnpm pipeline run expand --only --shard 1/2 --config ${join(dir, "config.yaml")} --data-dir ${join(dir, "data")}`,
      });
    }
    expect(kills).toBeGreaterThanOrEqual(3);

    // what `status` prints, as a person and a launcher read it
    const table = toyCli(["status", "--config", join(dir, "config.yaml")]).stdout;
    expect(table).toMatch(/expand\s+partial \(2 shards: 1 done, 1 failed \(1\)/);
    expect(table).toMatch(/ {2}shard 0\/2\s+done/);
    expect(table).toMatch(/ {2}shard 1\/2\s+failed \(process \d+ on .* died\)/);
    expect(table).toContain(
      `: pnpm pipeline run expand --only --shard 1/2 --config ${join(dir, "config.yaml")} --data-dir ${join(dir, "data")}`,
    );
    const json = JSON.parse(toyCli(["status", "--json", "--config", join(dir, "config.yaml")]).stdout);
    const expand = json.find((s: { stage: string }) => s.stage === "expand");
    expect(expand.shards.map((s: { state: string }) => s.state)).toEqual(["done", "failed"]);
    expect(expand.shards[1].command).toContain("--shard 1/2");
    expect(expand.shards[1].counts).toMatchObject({ out: expect.any(Number) });

    expect(await runShardChild(dir, "1/2")).toBe("done");
    const status = runner.status("expand");
    expect(status.state).toBe("complete");
    // every input of shard 1 committed once in its raw parts, however many kills
    const committed: number[] = [];
    for (const part of runner.store("expand", { index: 1, count: 2 }).parts()) {
      for await (const entry of readEntries(part)) if (!entry.f) committed.push(entry.s);
    }
    expect(new Set(committed).size).toBe(committed.length);
    expect(status.manifest!.counts).toEqual(reference.status("expand").manifest!.counts);
    expect(status.manifest!.outputHash).toBe(reference.status("expand").manifest!.outputHash);
    expect(sorted(await collect(runner.read("expand")))).toEqual(
      sorted(await collect(reference.read("expand"))),
    );
    expect(sorted(await collect(runner.read("expand", { rejects: true })))).toEqual(
      sorted(await collect(reference.read("expand", { rejects: true }))),
    );
  });
});
