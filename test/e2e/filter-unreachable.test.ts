// `pnpm pipeline run filter` with the scorer's server where nothing listens: the run stops after the
// probe with exit 3 and advice, marks no record failed, and a rerun against a live server gives the
// records of an undisturbed run. Likewise for a server that accepts connections and never answers,
// long before its requests would time out.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { StageStore } from "../../pipeline/store/stage-store.js";
import { blackHole, freePort } from "../support/ports.js";
import { tempDir } from "../support/temp-dir.js";
import { cli, outcomeOf, SECRET, useReferenceRun } from "./kit.js";

const ref = useReferenceRun("cf-filter-e2e-dead-");

describe("pnpm pipeline run filter: a server that never answers", () => {
  it("stops with exit 3 and the fix, records no failure, and a rerun once it is up is undisturbed", async () => {
    const dir = tempDir("cf-filter-dead-");
    const dead = `http://127.0.0.1:${await freePort()}/v1`;
    const probe = ["--set", "llm.scorer.probe_s=1", "--set", "llm.scorer.backoff_s=0.05"];
    const run = await cli(dir, ["run", "filter", ...probe], {
      OPENAI_BASE_URL: dead,
      OPENAI_API_KEY: SECRET,
    });
    expect(run.code, run.stderr).toBe(3);
    expect(run.stderr).toContain(`error: llm role 'scorer': no answer from ${dead}`);
    expect(run.stderr).toContain("ECONNREFUSED");
    expect(run.stderr).toContain("llm.scorer.base_url (unset, so $OPENAI_BASE_URL)");
    expect(run.stderr).toContain("the path ends in /v1");
    expect(run.stderr).not.toMatch(/\n\s+at /);
    const store = new StageStore(dir, "filter");
    const entries = store
      .parts()
      .flatMap((p) => readFileSync(p, "utf8").split("\n"))
      .filter(Boolean);
    expect(entries.filter((e) => "f" in JSON.parse(e))).toEqual([]);
    expect(store.manifest()?.state).not.toBe("complete");

    const rerun = await cli(dir, ["run", "filter"], ref.env());
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(await outcomeOf(dir)).toEqual({ kept: ref.reference.kept, rejected: ref.reference.rejected });
  });

  it("stops a server that accepts connections and never answers after the probe, not its requests' timeout", async () => {
    const hole = await blackHole();
    try {
      const dir = tempDir("cf-filter-hung-");
      // the test's own limit is far below timeout_s
      const probe = ["--set", "llm.scorer.probe_s=1", "--set", "llm.scorer.timeout_s=3600"];
      const run = await cli(dir, ["run", "filter", ...probe], {
        OPENAI_BASE_URL: `${hole.url}/v1`,
        OPENAI_API_KEY: SECRET,
      });
      expect(run.code, run.stderr).toBe(3);
      expect(run.stderr).toContain(`error: llm role 'scorer': no answer from ${hole.url}/v1`);
      expect(run.stderr).toContain("accepts connections but sent no answer");
      expect(run.stderr).not.toMatch(/\n\s+at /);
      const failed = new StageStore(dir, "filter")
        .parts()
        .flatMap((p) => readFileSync(p, "utf8").split("\n"))
        .filter((e) => e && "f" in JSON.parse(e));
      expect(failed).toEqual([]);

      const rerun = await cli(dir, ["run", "filter"], ref.env());
      expect(rerun.code, rerun.stderr).toBe(0);
      expect(await outcomeOf(dir)).toEqual({ kept: ref.reference.kept, rejected: ref.reference.rejected });
    } finally {
      await hole.close();
    }
  }, 300_000);
});
