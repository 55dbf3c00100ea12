// The real filter stage in shards, through the CLI, against the test LLM server: a shard killed with
// -9 and rerun alone pays for nothing twice, the union is the one-process run, and the response
// caches of shards and of one-process runs answer each other.
import { copyFileSync, existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { StageStore } from "../../pipeline/store/stage-store.js";
import { collect } from "../support/runner-kit.js";
import { tempDir } from "../support/temp-dir.js";
import { CONCURRENCY, cli, useReferenceRun } from "./kit.js";

const ref = useReferenceRun("cf-shard-filter-ref-");

const jsonLines = (text: string) => text.trim().split("\n").filter(Boolean).sort();

async function unionOf(dir: string): Promise<{ kept: string[]; rejected: string[] }> {
  const kept = await cli(dir, ["cat", "filter"], {});
  const rejected = await cli(dir, ["cat", "filter", "--rejects"], {});
  expect(kept.code, kept.stderr).toBe(0);
  return { kept: jsonLines(kept.stdout), rejected: jsonLines(rejected.stdout) };
}

async function filterStatus(dir: string) {
  const status = await cli(dir, ["status", "--json"], {});
  expect(status.code, status.stderr).toBe(0);
  return JSON.parse(status.stdout).find((s: { stage: string }) => s.stage === "filter");
}

describe("filter in shards", () => {
  it("a shard killed with -9 and rerun alone resends at most its requests in flight; the union is the one-process run", async () => {
    const dir = tempDir("cf-shard-filter-");
    expect((await cli(dir, ["run", "dedup"], {})).code).toBe(0);
    ref.server.reset();
    for (const shard of ["0/3", "1/3"]) {
      const run = await cli(dir, ["run", "filter", "--only", "--shard", shard], ref.env());
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toContain(`filter shard ${shard}: complete`);
    }
    const before = ref.server.count;
    const killed = await cli(
      dir,
      ["run", "filter", "--only", "--shard", "2/3"],
      ref.env(),
      () => ref.server.count >= before + 15,
    );
    expect(killed.signal).toBe("SIGKILL");
    const killedRun = ref.server.requests.slice(before).map((r) => r.key);

    // a global stage downstream would refuse now; status names the dead shard and its command
    const dead = await filterStatus(dir);
    expect(dead.state).toBe("partial");
    expect(dead.shards[2]).toMatchObject({ state: "failed" });
    expect(dead.shards[2].command).toContain("pnpm pipeline run filter --only --shard 2/3");

    const rerun = await cli(dir, ["run", "filter", "--only", "--shard", "2/3"], ref.env());
    expect(rerun.code, rerun.stderr).toBe(0);

    const keys = ref.server.requests.map((r) => r.key);
    // the one-process run's requests, each sent once, but for those in flight when the shard died
    expect(new Set(keys).size).toBe(ref.reference.requests);
    const twice = keys.filter((k, i) => keys.indexOf(k) !== i);
    expect(twice.length).toBeLessThanOrEqual(CONCURRENCY);
    const lastOnes = new Set(killedRun.slice(-CONCURRENCY * 2));
    for (const key of twice) expect(lastOnes.has(key)).toBe(true);

    expect(await unionOf(dir)).toEqual({ kept: ref.reference.kept, rejected: ref.reference.rejected });
    // each shard's index, the one the dialogue stages sample from, lists its outputs as read yields them
    for (let index = 0; index < 3; index++) {
      const shard = new StageStore(dir, "filter", { index, count: 3 });
      const { rows } = await shard.outputIndex(["lang"]);
      const records = await collect(shard.read());
      expect(rows.map((r) => [r.id, r.fields.lang])).toEqual(records.map((r) => [r.id, r.lang]));
    }
    const status = await filterStatus(dir);
    expect(status.state).toBe("complete");
    expect(status.outputHash).toBe(new StageStore(ref.dir, "filter").manifest()!.outputHash);
    // its statistics are the union's, as the one-process run's are (a shard's cover only its records)
    expect(status.stats).not.toBeNull();
    expect(status.stats).toEqual(new StageStore(ref.dir, "filter").manifest()!.stats);
    // one cache file per shard, and none shared
    expect(
      readdirSync(join(dir, "llm-cache.shards"))
        .filter((f) => f.endsWith(".sqlite"))
        .sort(),
    ).toEqual(["0-of-3.sqlite", "1-of-3.sqlite", "2-of-3.sqlite"]);
    expect(existsSync(join(dir, "llm-cache.sqlite"))).toBe(false);

    // the stage redone in one process finds every answer in the shards' caches
    expect((await cli(dir, ["reset", "filter"], {})).code).toBe(0);
    ref.server.reset();
    const single = await cli(dir, ["run", "filter", "--only"], ref.env());
    expect(single.code, single.stderr).toBe(0);
    expect(ref.server.count).toBe(0);
    expect(await unionOf(dir)).toEqual({ kept: ref.reference.kept, rejected: ref.reference.rejected });
  });

  it("shards find the answers a one-process run paid for", async () => {
    const dir = tempDir("cf-shard-filter-cache-");
    expect((await cli(dir, ["run", "dedup"], {})).code).toBe(0);
    copyFileSync(join(ref.dir, "llm-cache.sqlite"), join(dir, "llm-cache.sqlite"));
    ref.server.reset();
    for (const shard of ["0/2", "1/2"]) {
      const run = await cli(dir, ["run", "filter", "--only", "--shard", shard], ref.env());
      expect(run.code, run.stderr).toBe(0);
    }
    expect(ref.server.count).toBe(0);
    expect(await unionOf(dir)).toEqual({ kept: ref.reference.kept, rejected: ref.reference.rejected });

    // the report reads the sharded filter as one stage: its funnel is the one-process run's
    const funnel = await funnelOf(dir);
    expect(funnel).not.toContain('data-missing="funnel"');
    expect(funnel).toBe(await funnelOf(ref.dir));
  });
});

/** The report's filter funnel (figure and table), as `pnpm pipeline report` writes it for `dir`. */
async function funnelOf(dir: string): Promise<string> {
  const report = await cli(dir, ["report"], {});
  expect(report.code, report.stderr).toBe(0);
  const html = readFileSync(join(dir, "export", "report.html"), "utf8");
  const start = html.indexOf("Complexity filtering");
  const missing = html.indexOf('data-missing="funnel"');
  return start >= 0
    ? html.slice(start, html.indexOf("</section>", start))
    : html.slice(missing, missing + 80);
}
