// The real download and normalize stages in shards, on the bundled samples: dedup, a global stage
// whose "first copy in source order wins" depends on the order it reads, keeps exactly what it keeps
// after a one-process run.
import { describe, expect, it } from "vitest";
import { tempDir } from "../support/temp-dir.js";
import { cli } from "./kit.js";

async function statusOf(dir: string, stage: string) {
  const status = await cli(dir, ["status", "--json"], {});
  expect(status.code, status.stderr).toBe(0);
  return JSON.parse(status.stdout).find((s: { stage: string }) => s.stage === stage);
}

async function cat(dir: string, stage: string, rejects = false): Promise<string> {
  const out = await cli(dir, ["cat", stage, ...(rejects ? ["--rejects"] : [])], {});
  expect(out.code, out.stderr).toBe(0);
  return out.stdout;
}

describe("download and normalize in shards", () => {
  it("give dedup the one-process run's input, in its order", async () => {
    const single = tempDir("cf-shard-ingest-one-");
    const sharded = tempDir("cf-shard-ingest-");
    expect((await cli(single, ["run", "dedup"], {})).code).toBe(0);

    for (const stage of ["download", "normalize"]) {
      for (const shard of ["0/3", "1/3", "2/3"]) {
        const run = await cli(sharded, ["run", stage, "--only", "--shard", shard], {});
        expect(run.code, run.stderr).toBe(0);
      }
      const status = await statusOf(sharded, stage);
      expect(status.state).toBe("complete");
      expect(status.shards).toHaveLength(3);
      expect(status.outputHash).toBe((await statusOf(single, stage)).outputHash);
      expect(status.counts).toEqual((await statusOf(single, stage)).counts);
    }
    // the order dedup reads, not only the set
    expect(await cat(sharded, "normalize")).toBe(await cat(single, "normalize"));

    const dedup = await cli(sharded, ["run", "dedup", "--only"], {});
    expect(dedup.code, dedup.stderr).toBe(0);
    expect(await cat(sharded, "dedup")).toBe(await cat(single, "dedup"));
    expect(await cat(sharded, "dedup", true)).toBe(await cat(single, "dedup", true));
    expect((await statusOf(sharded, "dedup")).outputHash).toBe((await statusOf(single, "dedup")).outputHash);
  });
});
