// What a dialogue stage's seeded sample costs it before its first record, in CPU: chosen from the
// filter's output index and read by offset, against one read of the filter's whole output that
// chooses it, on a filter-like stage (filter-like.ts); also the index's one-off cost against sealing.
//
//   pnpm bench store-sample [-- --records 100000 --count 500 --runs 5]
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PipelineRecord } from "../../pipeline/record.js";
import { INDEX_FILE, type IndexRow, readIndexed, sampleRows } from "../../pipeline/store/output-index.js";
import { StoreError } from "../../pipeline/store/parts.js";
import { sealParts } from "../../pipeline/store/seal.js";
import type { StageStore } from "../../pipeline/store/stage-store.js";
import type { Selection } from "../../stages/dialogue-kit/config.js";
import { sampleOptions, selectedLanguage } from "../../stages/dialogue-kit/sample.js";
import { numberArg } from "../args.js";
import { upperMedian } from "../median.js";
import { writeFilterLike } from "./filter-like.js";

const records = numberArg("records", 100_000);
const count = numberArg("count", 500);
const runs = numberArg("runs", 5);
const dir = mkdtempSync(join(tmpdir(), "cf-bench-store-sample-"));
const selection: Selection = { languages: ["python"], count, seed: 3 };

/** The baseline: every output parsed in one pass that chooses the sample, its records kept. */
async function chooseByReading(store: StageStore): Promise<PipelineRecord[]> {
  const rows: IndexRow[] = [];
  const kept = new Map<string, PipelineRecord>();
  const all: PipelineRecord[] = [];
  for await (const record of store.read()) {
    const lang: Record<string, string> = typeof record.lang === "string" ? { lang: record.lang } : {};
    rows.push({
      id: record.id,
      at: rows.length,
      fields: lang,
      part: 0,
      offset: 0,
      length: 0,
      item: 0,
      sha: "",
    });
    if (selectedLanguage(record, selection)) all.push(record);
  }
  // the old pass kept its heap's records as it went; keeping them all and picking at the end costs less
  const chosen = sampleRows(rows, sampleOptions(selection));
  for (const record of all) kept.set(record.id, record);
  return chosen.map((row) => kept.get(row.id)!);
}

async function chooseByIndex(store: StageStore): Promise<PipelineRecord[]> {
  const { rows, paths } = await store.outputIndex(["lang"]);
  const chosen = sampleRows(rows, sampleOptions(selection));
  const out: PipelineRecord[] = [];
  for await (const record of readIndexed(paths, chosen, (what) => new StoreError(what))) out.push(record);
  return out;
}

const cpuMs = (since: NodeJS.CpuUsage) => {
  const d = process.cpuUsage(since);
  return (d.user + d.system) / 1000;
};

try {
  const { store, outputs } = await writeFilterLike(dir, records, 0.45);
  const bytes = store.parts().reduce((sum, p) => sum + statSync(p).size, 0);
  const start = process.cpuUsage();
  await store.outputIndex(["lang"]);
  const making = cpuMs(start);
  const indexBytes = statSync(join(store.partsDir, INDEX_FILE)).size;

  const reading: number[] = [];
  const indexed: number[] = [];
  const sealing: number[] = [];
  for (let r = 0; r < runs + 1; r++) {
    const pair = [
      [() => chooseByReading(store), reading],
      [() => chooseByIndex(store), indexed],
    ] as const;
    // alternating, which goes first alternating too; the first round a warm-up (page cache, JIT)
    const results: string[] = [];
    for (const [choose, times] of r % 2 ? [...pair].reverse() : pair) {
      const start = process.cpuUsage();
      const sample = await choose();
      if (r > 0) times.push(cpuMs(start));
      results.push(JSON.stringify(sample));
      if (sample.length !== count) throw new Error(`chose ${sample.length} of ${count}`);
    }
    if (results[0] !== results[1]) throw new Error("the two ways chose different samples");
    const start = process.cpuUsage();
    sealParts(store.parts());
    if (r > 0) sealing.push(cpuMs(start));
  }
  console.log(
    `${records} entries (${outputs} outputs, the rest rejects holding their record), ` +
      `${(bytes / 2 ** 20).toFixed(1)} MiB; its index ${(indexBytes / 2 ** 20).toFixed(1)} MiB; ` +
      `a sample of ${count}; ${runs} rounds, alternating; CPU ms, median`,
  );
  const ratio = upperMedian(reading.map((t, i) => t / indexed[i]!));
  console.log(
    `choose the sample and read its records: by the index ${upperMedian(indexed).toFixed(0)} ms, ` +
      `by reading every output (baseline) ${upperMedian(reading).toFixed(0)} ms: ` +
      `baseline / index = ${ratio.toFixed(1)}x (median of per-round ratios)`,
  );
  console.log(
    `make the index: ${making.toFixed(0)} ms, once, on first use; seal the stage ` +
      `${upperMedian(sealing).toFixed(0)} ms (median)`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
