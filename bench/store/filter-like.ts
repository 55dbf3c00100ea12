// A complete stage that looks like the filter's output, for the store's benchmarks: every input's
// entry holds its record (~2.3 KB, code and non-ASCII-free text, as the filter writes them), as an
// output when it passed and inside a reject when it did not (`rejectShare` of them, the paper's 0.45).
import { StageStore } from "../../pipeline/store/stage-store.js";

/** A normalized seed with its scores. */
export function filterRecord(i: number) {
  const code = `def f${i}(xs):\n    # sorted, scaled\n    return sorted(x * ${i % 97} for x in xs)\n`.repeat(
    12,
  );
  return {
    id: `src:${i}`,
    query: `Write a function number ${i} that sorts scaled values and explains why. `.repeat(6),
    answer: `Here is the function:\n\n\`\`\`python\n${code}\`\`\`\n`,
    resource: "bench",
    lang: i % 10 === 9 ? "javascript" : "python",
    scores: { first: 4, second: 5 },
  };
}

/** Writes and completes (seals) the stage `filter` under `dir`. */
export async function writeFilterLike(
  dir: string,
  records: number,
  rejectShare: number,
): Promise<{ store: StageStore; outputs: number }> {
  const store = new StageStore(dir, "filter");
  const writer = store.newPart();
  let outputs = 0;
  for (let i = 0; i < records; i++) {
    // spread evenly: the share of rejects is exact whatever the count
    const rejected = Math.floor((i + 1) * rejectShare) > Math.floor(i * rejectShare);
    if (rejected)
      writer.append({ s: i, r: [{ id: `src:${i}`, reason: "low-score", record: filterRecord(i) }] });
    else writer.append({ s: i, o: [filterRecord(i)] }, () => {});
    if (!rejected) outputs++;
  }
  writer.close();
  const now = new Date().toISOString();
  store.saveManifest({
    version: 1,
    stage: "filter",
    state: "complete",
    configHash: "bench",
    upstream: {},
    counts: { in: records, out: outputs, rejected: records - outputs, failed: 0 },
    runs: 1,
    startedAt: now,
    updatedAt: now,
    elapsedMs: 0,
  });
  return { store, outputs };
}
