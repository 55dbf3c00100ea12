// A dialogue stage with a count chooses its sample from the filter's output index and reads only the
// sample's records: through the runner, the index is made on first use and kept, a dry run writes
// none, and the records run are exactly the sample.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sampleRows } from "../../pipeline/store/output-index.js";
import { sampleOptions } from "../../stages/dialogue-kit/sample.js";
import { collect } from "../support/runner-kit.js";
import { tempDir } from "../support/temp-dir.js";
import { filterRecord, runnerFor, scriptedWorld } from "./kit.js";

const world = scriptedWorld();

const RECORDS = Array.from({ length: 24 }, (_, i) =>
  filterRecord(`s:${i}`, "corr-syntax", i % 3 ? "python" : "javascript", `Mean of list ${i}.`),
);

describe("a dialogue stage's sample, through the filter's index", () => {
  it("is made on first use and kept, never by a dry run, and the stage runs exactly the sample", async () => {
    const stages = "  correct:\n    count: 4\n    languages: [python]\n    seed: 5\n";
    const { runner, close } = runnerFor(tempDir("cf-sample-index-"), () => RECORDS, {
      url: world.server.url,
      sandbox: world.sandbox,
      stages,
    });
    try {
      await runner.run(["filter"]);
      const index = join(runner.store("filter").partsDir, "outputs.index.jsonl");
      expect(existsSync(index)).toBe(false);

      const dry = await runner.run(["correct"], { dryRun: true });
      expect(dry.at(-1)).toMatchObject({ stage: "correct", action: "estimated" });
      expect(existsSync(index)).toBe(false);
      expect(world.server.requests).toHaveLength(0);

      await runner.run(["correct"]);
      expect(existsSync(index)).toBe(true);
      const { rows } = await runner.index("filter", ["lang"]);
      const sample = sampleRows(rows, sampleOptions({ languages: ["python"], count: 4, seed: 5 })).map(
        (r) => r.id,
      );
      expect(sample).toHaveLength(4);
      const done = [
        ...(await collect(runner.store("correct").read())).map((d) => (d.sources as string[])[0]),
        ...(await collect(runner.store("correct").read({ rejects: true }))).map((r) => r.id),
      ];
      expect(done.sort()).toEqual([...sample].sort());
    } finally {
      await close();
    }
  });
});
