// The manifest's `sandbox`: the programs a stage ran and the sandbox's busy time, counted with each
// committed record (so a kill -9 and a resume neither lose nor double one), per /run_code server when
// there are several, for a global stage's run, and summed over shards.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Runner } from "../../pipeline/runner.js";
import { readEntries } from "../../pipeline/store/index.js";
import type { SandboxUsage } from "../../pipeline/usage.js";
import { runKillableChild } from "../support/killable-child.js";
import { makeRunner } from "../support/runner-kit.js";
import {
  expectedPrograms,
  PROGRAM_S,
  SANDBOX_TOY_STAGES,
  timedRunCodeServer,
} from "../support/sandbox-toy.js";
import { tempDir } from "../support/temp-dir.js";

const CHILD = new URL("../support/sandbox-crash-child.ts", import.meta.url).pathname;
const busyMs = (runs: number) => runs * PROGRAM_S * 1000;

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** Two /run_code servers and the config that lists them. */
async function servers(count: number, delayMs: number) {
  const a = await timedRunCodeServer(delayMs);
  const b = await timedRunCodeServer(delayMs);
  closers.push(a.close, b.close);
  const yaml = `sandbox: {url: [${a.url}, ${b.url}], workers: 2}\nstages:\n  numbers: {count: ${count}}\n`;
  return { yaml, served: () => a.served() + b.served(), urls: [`${a.url}/run_code`, `${b.url}/run_code`] };
}

function runner(dir: string, yaml: string): Runner {
  const r = makeRunner(SANDBOX_TOY_STAGES, { dir, yaml, services: true });
  closers.push(() => r.options.services.close());
  return r;
}

/** Every program counted once in all, and per server: the servers' counts add up to the whole. */
function expectExact(sandbox: SandboxUsage | undefined, runs: number, urls: string[]) {
  expect(sandbox).toMatchObject({ runs, busyMs: busyMs(runs) });
  const endpoints = sandbox!.endpoints ?? {};
  expect(Object.keys(endpoints).sort()).toEqual([...urls].sort());
  const perServer = Object.values(endpoints);
  expect(perServer.reduce((n, e) => n + e.runs, 0)).toBe(runs);
  expect(perServer.reduce((n, e) => n + e.busyMs, 0)).toBe(busyMs(runs));
}

describe("sandbox programs in the manifest", () => {
  it("are committed with each record, per server, and a global stage counts its run", async () => {
    const { yaml, served, urls } = await servers(40, 2);
    const dir = tempDir();
    const r = runner(dir, yaml);
    await r.run(["judge"]);
    const programs = r.status("programs").manifest!;
    expectExact(programs.sandbox, expectedPrograms(40), urls);
    // each committed entry carries its record's programs: value % 4 of them
    const store = r.store("programs");
    for (const part of store.parts()) {
      for await (const entry of readEntries(part)) {
        const value = entry.o![0]!.value as number;
        expect(entry.x?.runs ?? 0).toBe(value % 4);
      }
    }
    // judge, a global stage, ran one program per record it read
    expectExact(r.status("judge").manifest!.sandbox, 40, urls);
    expect(served()).toBe(expectedPrograms(40) + 40);
    // a stage that runs no program has no `sandbox`
    expect(r.status("numbers").manifest!.sandbox).toBeUndefined();
  });

  it("are summed over shards, as a one-process run counts them", async () => {
    const { yaml, urls } = await servers(60, 1);
    const single = runner(tempDir(), yaml);
    await single.run(["programs"]);
    const dir = tempDir();
    const sharded = runner(dir, yaml);
    await sharded.run(["numbers"]);
    for (let index = 0; index < 3; index++) {
      await sharded.run(["programs"], { shard: { index, count: 3 } });
    }
    const status = sharded.status("programs");
    expect(status.state).toBe("complete");
    const shards = status.shards!.map((s) => s.manifest!.sandbox!.runs);
    expect(shards.every((n) => n > 0)).toBe(true);
    expect(shards.reduce((a, b) => a + b, 0)).toBe(expectedPrograms(60));
    expectExact(status.manifest!.sandbox, expectedPrograms(60), urls);
    expect(status.manifest!.sandbox!.runs).toBe(single.status("programs").manifest!.sandbox!.runs);
    expect((await sharded.manifestOf("programs"))!.sandbox).toEqual(status.manifest!.sandbox);
  });

  it("are exact after kill -9 at random instants and a resume, in every shard", async () => {
    const count = 1200;
    const { yaml, served, urls } = await servers(count, 8);
    const dir = tempDir();
    writeFileSync(join(dir, "child.yaml"), yaml);
    await runner(dir, yaml).run(["numbers"]);
    let kills = 0;
    for (const shard of ["0/2", "1/2"]) {
      const parts = join(dir, "data/programs/shards", shard.replace("/", "-of-"), "parts");
      let killed = 0;
      let finished = false;
      while (!finished) {
        // three kills a shard while it writes, then a run to the end
        const outcome = await runKillableChild(CHILD, [dir, shard], {
          watch: parts,
          killAfterMs: killed < 3 ? Math.random() * 250 : undefined,
        });
        if (outcome === "killed") killed++;
        else finished = true;
      }
      kills += killed;
    }
    expect(kills).toBeGreaterThanOrEqual(4);
    const r = runner(dir, yaml);
    const status = r.status("programs");
    expect(status.state).toBe("complete");
    expectExact(status.manifest!.sandbox, expectedPrograms(count), urls);
    // the kills cut programs short: what ran for records that were not committed is not counted
    expect(served()).toBeGreaterThanOrEqual(expectedPrograms(count));
  }, 180_000);
});
