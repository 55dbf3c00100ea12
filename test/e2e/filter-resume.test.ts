// `pnpm pipeline run filter` end to end: what a dry-run estimates, and what a run costs and keeps
// when it is killed with -9 in the middle of round 2 or meets injected faults, then is resumed.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { StageStore } from "../../pipeline/store/stage-store.js";
import { filesContaining } from "../llm/helpers.js";
import { faultRate } from "../support/llm-server.js";
import { tempDir } from "../support/temp-dir.js";
import { CONCURRENCY, cli, isRound2, outcomeOf, SECRET, useReferenceRun } from "./kit.js";

const ref = useReferenceRun("cf-filter-e2e-resume-");

describe("pnpm pipeline run filter: dry-run and resuming", () => {
  it("without an endpoint stops after dedup with the recipe; --dry-run still estimates, from the cache", async () => {
    const dir = tempDir("cf-filter-dry-");
    const run = await cli(dir, ["run", "filter"], {});
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("dedup: complete");
    expect(run.stderr).toContain("no endpoint for the LLM role 'scorer'");
    expect(run.stderr).toContain("OPENAI_BASE_URL");
    expect(run.stderr).not.toMatch(/\n\s+at /);

    ref.server.reset();
    const dry = await cli(dir, ["run", "filter", "--dry-run"], ref.env());
    expect(dry.code, dry.stderr).toBe(0);
    const records = ref.reference.kept.length + ref.reference.rejected.length;
    expect(dry.stderr).toMatch(new RegExp(`filter: would send \\d+ requests.*over ${records} records`));
    expect(dry.stderr).toContain("0 answers already cached");
    expect(ref.server.count).toBe(0);

    // No endpoint, but the reference run's cache: everything is answered, nothing would be sent.
    const cache = `llm.cache.path=${join(ref.dir, "llm-cache.sqlite")}`;
    const offline = await cli(dir, ["run", "filter", "--dry-run", "--set", cache], {});
    expect(offline.code, offline.stderr).toBe(0);
    expect(offline.stderr).toContain("filter: would send 0 requests");
    expect(offline.stderr).toContain(`${ref.reference.requests} answers already cached`);
  });

  it("re-sends at most the requests in flight after a kill -9 in the middle of round 2", async () => {
    const dir = tempDir("cf-filter-kill-");
    ref.server.reset();
    const killed = await cli(
      dir,
      ["run", "filter"],
      ref.env(),
      () => ref.server.requests.filter(isRound2).length >= 12,
    );
    expect(killed.signal).toBe("SIGKILL");
    // What the first run had asked for when it died; answers to most of these are in the cache.
    const firstRun = ref.server.requests.map((r) => r.key);
    const firstKeys = new Set(firstRun);
    expect(firstRun.length).toBeLessThan(ref.reference.requests);

    ref.server.reset();
    const resumed = await cli(dir, ["run", "filter"], ref.env());
    expect(resumed.code, resumed.stderr).toBe(0);
    const resent = ref.server.requests.filter((r) => firstKeys.has(r.key)).map((r) => r.key);

    expect(resent.length).toBeLessThanOrEqual(CONCURRENCY);
    // Only requests from the end of the first run can have been in flight when it was killed.
    const lastOnes = new Set(firstRun.slice(-CONCURRENCY * 2));
    for (const key of resent) expect(lastOnes.has(key)).toBe(true);

    expect(await outcomeOf(dir)).toEqual({ kept: ref.reference.kept, rejected: ref.reference.rejected });
  });

  it("Ctrl-C with requests in flight: exit 130 once their answers are kept, and the rerun sends none of them again", async () => {
    const dir = tempDir("cf-filter-sigint-");
    ref.server.reset();
    // slow answers, so a full set of requests is in flight when the signal comes
    ref.server.options.latencyMs = 1500;
    let stopped: Awaited<ReturnType<typeof cli>>;
    try {
      stopped = await cli(
        dir,
        ["run", "filter"],
        ref.env(),
        () => ref.server.inFlight >= CONCURRENCY,
        "SIGINT",
      );
    } finally {
      ref.server.options.latencyMs = 15;
    }
    expect(stopped.code, stopped.stderr).toBe(130);
    expect(stopped.stderr).toContain("finishing the records in flight and saving");
    expect(stopped.stderr).toMatch(/llm role 'scorer': waiting for \d+ request\(s\) in flight/);
    // every request the first run sent was answered in full, none cut off
    const first = new Set(ref.server.requests.map((r) => r.key));
    expect(first.size).toBeGreaterThanOrEqual(CONCURRENCY);
    expect([...first].every((key) => ref.server.answered.get(key) === 1)).toBe(true);

    ref.server.reset();
    const resumed = await cli(dir, ["run", "filter"], ref.env());
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(ref.server.requests.filter((r) => first.has(r.key))).toEqual([]);
    expect(await outcomeOf(dir)).toEqual({ kept: ref.reference.kept, rejected: ref.reference.rejected });
  });

  it("loses no record to injected faults: failures are counted with their reasons and redone", async () => {
    const dir = tempDir("cf-filter-faults-");
    ref.server.reset();
    ref.server.options.fault = faultRate(
      0.3,
      [{ type: "status", status: 503 }, { type: "malformed" }, { type: "drop" }],
      3,
    );
    try {
      const faulty = await cli(dir, ["run", "filter", "--set", "llm.scorer.retries=0"], ref.env());
      expect(faulty.code).toBe(1);
      expect(faulty.stderr).toMatch(
        /filter: \d+ records failed\b.*llm-(server-error|malformed-response|connection)/,
      );
      const manifest = new StageStore(dir, "filter").manifest()!;
      expect(manifest.state).toBe("partial");
      expect(manifest.counts.failed).toBeGreaterThan(0);
      expect(manifest.counts.in + manifest.counts.failed).toBe(
        ref.reference.kept.length + ref.reference.rejected.length,
      );
      expect(manifest.usage!.failedRequests).toBeGreaterThan(0);
    } finally {
      ref.server.options.fault = undefined;
    }
    const resumed = await cli(dir, ["run", "filter", "--set", "llm.scorer.retries=0"], ref.env());
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(await outcomeOf(dir)).toEqual({ kept: ref.reference.kept, rejected: ref.reference.rejected });
    expect(filesContaining(dir, SECRET)).toEqual([]);
  });
});
