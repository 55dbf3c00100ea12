// What reading a complete stage costs its reader in CPU: the store's reader (megabyte reads cut at
// newlines, entries without the items asked for left unparsed) against a line reader over a file
// stream that parses every entry, both checking the seal, on a filter-like stage (filter-like.ts;
// `--rejects` of its entries are rejects holding their record) read for outputs and for rejects.
//   pnpm bench store-read [-- --records 100000 --rejects 0.45 --runs 5]
import { createReadStream, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { createInterface } from "node:readline";
import { DoneSet } from "../../pipeline/store/done-set.js";
import type { Manifest } from "../../pipeline/store/manifest.js";
import type { Entry } from "../../pipeline/store/parts.js";
import { PartHashCheck } from "../../pipeline/store/seal.js";
import type { StageStore } from "../../pipeline/store/stage-store.js";
import { numberArg } from "../args.js";
import { upperMedian } from "../median.js";
import { writeFilterLike } from "./filter-like.js";

const records = numberArg("records", 100_000);
const rejectShare = numberArg("rejects", 0.45);
const runs = numberArg("runs", 5);
const dir = mkdtempSync(join(tmpdir(), "cf-bench-store-read-"));

/** The baseline: each part through a line reader, every entry parsed, the seal checked as it streams. */
async function lineReader(store: StageStore, want: "o" | "r", seal: Manifest["parts"]): Promise<number> {
  const seen = new DoneSet();
  let n = 0;
  for (const part of store.parts()) {
    const check = new PartHashCheck(seal!.find((p) => p.file === basename(part))!);
    const input = createReadStream(part, { highWaterMark: 1 << 20 });
    input.on("data", check.add);
    for await (const line of createInterface({ input, crlfDelay: Infinity })) {
      if (line.length === 0) continue;
      const entry = JSON.parse(line) as Entry;
      if (entry.f) continue;
      if (seen.has(entry.s)) continue;
      seen.add(entry.s);
      n += (want === "o" ? entry.o : entry.r)?.length ?? 0;
    }
    check.verify(store.stage, store.dir);
  }
  return n;
}

async function storeReader(store: StageStore, want: "o" | "r"): Promise<number> {
  let n = 0;
  for await (const _ of store.read({ rejects: want === "r" })) n++;
  return n;
}

const cpuMs = (since: NodeJS.CpuUsage) => {
  const d = process.cpuUsage(since);
  return (d.user + d.system) / 1000;
};

try {
  const { store, outputs } = await writeFilterLike(dir, records, rejectShare);
  const seal = store.manifest()!.parts;
  const bytes = store.parts().reduce((sum, p) => sum + statSync(p).size, 0);

  const line: Record<"o" | "r", number[]> = { o: [], r: [] };
  const ours: Record<"o" | "r", number[]> = { o: [], r: [] };
  for (let r = 0; r < runs + 1; r++) {
    for (const want of ["o", "r"] as const) {
      const expected = want === "o" ? outputs : records - outputs;
      const pair = [
        [() => lineReader(store, want, seal), line[want]],
        [() => storeReader(store, want), ours[want]],
      ] as const;
      // alternating, which goes first alternating too; the first round a warm-up (page cache, JIT)
      for (const [read, times] of r % 2 ? [...pair].reverse() : pair) {
        const start = process.cpuUsage();
        const n = await read();
        if (n !== expected) throw new Error(`read ${n} of ${expected}`);
        if (r > 0) times.push(cpuMs(start));
      }
    }
  }
  console.log(
    `${records} entries (${outputs} outputs, ${records - outputs} rejects holding their record), ` +
      `${(bytes / 2 ** 20).toFixed(1)} MiB, ${runs} rounds, alternating; CPU ms, median`,
  );
  for (const want of ["o", "r"] as const) {
    const what = want === "o" ? "outputs" : "rejects";
    const ratio = upperMedian(line[want].map((t, i) => t / ours[want][i]!));
    console.log(
      `read ${what.padEnd(7)}: store reader ${upperMedian(ours[want]).toFixed(0)} ms, line reader (baseline) ` +
        `${upperMedian(line[want]).toFixed(0)} ms: baseline / store = ${ratio.toFixed(2)}x (median of per-round ratios)`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
