// The manifest's `sandbox`: the programs a stage ran and the sandbox's busy time, per /run_code
// server when there are several, for a record-wise and a global stage, and summed over shards.
// (A resumed run carrying on from the previous one's count: usage.test.ts.)
import { afterEach, describe, expect, it } from "vitest";
import type { Runner } from "../../pipeline/runner.js";
import type { SandboxUsage } from "../../pipeline/usage.js";
import { makeRunner } from "../support/runner-kit.js";
import {
  expectedPrograms,
  PROGRAM_S,
  SANDBOX_TOY_STAGES,
  timedRunCodeServer,
} from "../support/sandbox-toy.js";
import { tempDir } from "../support/temp-dir.js";

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
  it("are counted per server, for a record-wise stage and a global one", async () => {
    const { yaml, served, urls } = await servers(40, 2);
    const dir = tempDir();
    const r = runner(dir, yaml);
    await r.run(["judge"]);
    const programs = r.status("programs").manifest!;
    expectExact(programs.sandbox, expectedPrograms(40), urls);
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
});
