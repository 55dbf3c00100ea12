// `pnpm pipeline run filter` when the scorer's server fails mid-run (503 to everything): with
// `on_outage: wait` the run waits it out and ends as an undisturbed run; with `stop` it stops with
// exit 3, marking at most the records in flight failed, and a rerun once it is back ends the same.
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { StageStore } from "../../pipeline/store/stage-store.js";
import { tempDir } from "../support/temp-dir.js";
import { CONCURRENCY, cli, outcomeOf, useReferenceRun } from "./kit.js";

const ref = useReferenceRun("cf-filter-e2e-outage-");

// outage_s shorter than any backoff: a request's second failure always comes after the outage began
const OUTAGE = [
  "llm.scorer.outage_s=0.001",
  "llm.scorer.backoff_s=0.01",
  "llm.scorer.max_backoff_s=0.05",
  "llm.scorer.retries=1",
];
const sets = (more: string[]) => [...OUTAGE, ...more].flatMap((s) => ["--set", s]);

/** 503 to every request after the first `after`, for `lasting` requests (or for good). */
function downAfter(after: number, lasting = Number.POSITIVE_INFINITY) {
  let n = 0;
  ref.server.options.fault = () => {
    n++;
    return n > after && n <= after + lasting ? { type: "status", status: 503 } : undefined;
  };
}

function failedEntries(dir: string): number {
  return new StageStore(dir, "filter")
    .parts()
    .flatMap((p) => readFileSync(p, "utf8").split("\n"))
    .filter((line) => line && "f" in JSON.parse(line)).length;
}

afterEach(() => {
  ref.server.options.fault = undefined;
});

describe("pnpm pipeline run filter: an outage mid-run", () => {
  it("on_outage wait: waits for the server and ends as an undisturbed run", async () => {
    const dir = tempDir("cf-filter-outage-wait-");
    downAfter(30, 80);
    const run = await cli(dir, ["run", "filter", ...sets(["llm.scorer.on_outage=wait"])], ref.env());
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/waiting for http:\/\/127\.0\.0\.1:\d+\/v1 since \d\d:\d\d/);
    expect(failedEntries(dir)).toBe(0);
    expect(await outcomeOf(dir)).toEqual({ kept: ref.reference.kept, rejected: ref.reference.rejected });
  });

  it("on_outage stop: exit 3, at most the records in flight failed, and the rerun ends the same", async () => {
    const dir = tempDir("cf-filter-outage-stop-");
    downAfter(30);
    const run = await cli(dir, ["run", "filter", ...sets(["llm.scorer.on_outage=stop"])], ref.env());
    expect(run.code, run.stderr).toBe(3);
    expect(run.stderr).toMatch(
      /error: llm role 'scorer': every server \(http:\/\/127\.0\.0\.1:\d+\/v1\) has failed since/,
    );
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(failedEntries(dir)).toBeLessThanOrEqual(CONCURRENCY);

    ref.server.options.fault = undefined;
    const rerun = await cli(dir, ["run", "filter"], ref.env());
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(await outcomeOf(dir)).toEqual({ kept: ref.reference.kept, rejected: ref.reference.rejected });
  });
});
