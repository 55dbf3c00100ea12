// What checking a complete stage against its seal costs: reading a sealed stage (sizes first, each
// part's SHA-256 as it streams, counts at the end) against reading the same parts with no seal in the
// manifest, alternating, in one run; and sealing at completion against writing the parts.
//
//   pnpm bench seal [-- --records 200000 --runs 5]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Manifest } from "../../pipeline/store/manifest.js";
import { StageStore } from "../../pipeline/store/stage-store.js";
import { numberArg } from "../args.js";
import { upperMedian } from "../median.js";

const records = numberArg("records", 200_000);
const runs = numberArg("runs", 5);
const dir = mkdtempSync(join(tmpdir(), "cf-bench-seal-"));

/** A record the size of a normalized seed (a query and an answer with code, ~1.2 KB). */
function record(i: number) {
  const code = `def f${i}(xs):\n    return sorted(x * ${i % 97} for x in xs)\n`.repeat(8);
  return {
    id: `src:${i}`,
    query: `Write a function number ${i} that sorts scaled values. `.repeat(4),
    answer: code,
    lang: "python",
  };
}

async function readAll(store: StageStore): Promise<number> {
  let n = 0;
  for await (const _ of store.read()) n++;
  return n;
}

try {
  const store = new StageStore(dir, "normalize");
  const writeStart = performance.now();
  const writer = store.newPart();
  for (let i = 0; i < records; i++) writer.append({ s: i, o: [record(i)] });
  writer.close();
  const writeMs = performance.now() - writeStart;

  const now = new Date().toISOString();
  const base: Manifest = {
    version: 1,
    stage: "normalize",
    state: "complete",
    configHash: "bench",
    upstream: {},
    counts: { in: records, out: records, rejected: 0, failed: 0 },
    runs: 1,
    startedAt: now,
    updatedAt: now,
    elapsedMs: 0,
  };
  const sealStart = performance.now();
  store.saveManifest(base); // complete and unsealed: seals its parts
  const sealMs = performance.now() - sealStart;
  const sealed = store.manifest()!;
  const unsealed = { ...sealed };
  delete unsealed.parts;

  const withSeal: number[] = [];
  const without: number[] = [];
  for (let r = 0; r < runs + 1; r++) {
    // alternating, the first pair a warm-up (page cache, JIT)
    const pair = [
      [unsealed, without],
      [sealed, withSeal],
    ] as const;
    // which goes first alternates too: the second read of a pair finds the other's garbage to collect
    for (const [manifest, times] of r % 2 ? [...pair].reverse() : pair) {
      store.saveManifest(manifest.parts ? manifest : { ...manifest, state: "partial" });
      const start = performance.now();
      const n = await readAll(store);
      if (n !== records) throw new Error(`read ${n} of ${records}`);
      if (r > 0) times.push(performance.now() - start);
    }
  }
  const a = upperMedian(withSeal);
  const b = upperMedian(without);
  // per pair: the two reads of a pair ran back to back, under the same load
  const ratio = upperMedian(withSeal.map((t, i) => t / without[i]!));
  console.log(`${records} records, ${runs} pairs, alternating`);
  console.log(`read, sealed (checked):    ${a.toFixed(0)} ms (median)`);
  console.log(`read, no seal (baseline):  ${b.toFixed(0)} ms (median)`);
  console.log(`ratio sealed / baseline:   ${ratio.toFixed(3)}x (median of per-pair ratios)`);
  console.log(
    `sealing at completion:     ${sealMs.toFixed(0)} ms, ${(sealMs / writeMs).toFixed(3)}x the ${writeMs.toFixed(0)} ms of writing the parts`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
