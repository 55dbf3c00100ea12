// Settings that cannot change a record (how much runs at once, how long to wait, how often to retry,
// what a dry run assumes) are marked `operational()` in the schemas and left out of a stage's config
// hash: changing one leaves a complete stage complete, while a setting that shapes a record makes it
// stale. The table below must name every marked setting, so a new mark comes with its check.
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { rootConfigSchema } from "../../pipeline/config/schema.js";
import { settingOf } from "../../pipeline/hash.js";
import { STAGES } from "../../stages/index.js";
import { makeRunner } from "../support/runner-kit.js";
import { tempDir } from "../support/temp-dir.js";
import { TOY_STAGES } from "../support/toy-stages.js";

/** The dotted paths of the settings marked operational, through objects and the options of unions. */
function operationalPaths(schema: z.ZodType, at: string): string[] {
  const setting = settingOf(schema);
  if (setting === "operational") return [at];
  const { shape, options } = setting;
  if (options) return [...new Set(options.flatMap((o) => operationalPaths(o, at)))];
  return Object.entries(shape ?? {}).flatMap(([key, s]) => operationalPaths(s, at ? `${at}.${key}` : key));
}

// the new value of each marked setting (`--set` assignments), and what must be set first
const OPENAI_EMBEDDER = ["stages.pack.embedder.kind=openai", "stages.pack.embedder.model=m"];
const CHANGES: Record<string, { set: string[]; base?: string[] }> = {
  ...Object.fromEntries(
    ["scorer", "weak", "strong"].flatMap((role) => [
      [`llm.${role}.concurrency`, { set: [`llm.${role}.concurrency=3`] }],
      [`llm.${role}.timeout_s`, { set: [`llm.${role}.timeout_s=7`] }],
      [`llm.${role}.retries`, { set: [`llm.${role}.retries=0`] }],
      [`llm.${role}.backoff_s`, { set: [`llm.${role}.backoff_s=0.5`] }],
      [`llm.${role}.max_backoff_s`, { set: [`llm.${role}.max_backoff_s=9`] }],
      [`llm.${role}.probe_s`, { set: [`llm.${role}.probe_s=5`] }],
      [`llm.${role}.outage_s`, { set: [`llm.${role}.outage_s=5`] }],
      [`llm.${role}.on_outage`, { set: [`llm.${role}.on_outage=stop`] }],
      [`llm.${role}.requests_per_minute`, { set: [`llm.${role}.requests_per_minute=60`] }],
      [`llm.${role}.tokens_per_minute`, { set: [`llm.${role}.tokens_per_minute=6000`] }],
      [`llm.${role}.stream`, { set: [`llm.${role}.stream=true`] }],
      [`llm.${role}.balance`, { set: [`llm.${role}.balance.eject_after=9`] }],
      [`llm.${role}.batch`, { set: [`llm.${role}.batch={provider: files}`] }],
    ]),
  ),
  "sandbox.balance": { set: ["sandbox.balance.eject_s=1"] },
  "sandbox.probe_s": { set: ["sandbox.probe_s=5"] },
  "sandbox.outage_s": { set: ["sandbox.outage_s=5"] },
  "sandbox.on_outage": { set: ["sandbox.on_outage=stop"] },
  "sandbox.workers": { set: ["sandbox.workers=3"] },
  "sandbox.queue": { set: ["sandbox.queue=5"] },
  launch: { set: ["launch.shards=4", "launch.slurm.partition=gpu"] },
  "stages.download.concurrency": { set: ["stages.download.concurrency=5"] },
  "stages.filter.concurrency": { set: ["stages.filter.concurrency=5"] },
  "stages.filter.estimate": { set: ["stages.filter.estimate.pass_rate=0.5"] },
  "stages.pack.embedder.concurrency": { base: OPENAI_EMBEDDER, set: ["stages.pack.embedder.concurrency=9"] },
  "stages.pack.embedder.timeout_s": { base: OPENAI_EMBEDDER, set: ["stages.pack.embedder.timeout_s=9"] },
  "stages.pack.embedder.retries": { base: OPENAI_EMBEDDER, set: ["stages.pack.embedder.retries=0"] },
  "stages.pack.embedder.probe_s": { base: OPENAI_EMBEDDER, set: ["stages.pack.embedder.probe_s=5"] },
  ...Object.fromEntries(
    ["simulate", "correct"].flatMap((stage) => [
      [`stages.${stage}.concurrency`, { set: [`stages.${stage}.concurrency=5`] }],
      [`stages.${stage}.execution.concurrency`, { set: [`stages.${stage}.execution.concurrency=5`] }],
      [
        `stages.${stage}.execution.sandbox_attempts`,
        { set: [`stages.${stage}.execution.sandbox_attempts=1`] },
      ],
    ]),
  ),
  "stages.leetcode.concurrency": { set: ["stages.leetcode.concurrency=64"] },
  "stages.leetcode.validation.concurrency": { set: ["stages.leetcode.validation.concurrency=3"] },
  "stages.leetcode.validation.sandbox_attempts": { set: ["stages.leetcode.validation.sandbox_attempts=5"] },
  "stages.leetcode.estimate": { set: ["stages.leetcode.estimate.completion_tokens=50"] },
  "stages.validate.concurrency": { set: ["stages.validate.concurrency=2"] },
  "stages.validate.sandbox_concurrency": { set: ["stages.validate.sandbox_concurrency=2"] },
  "stages.validate.sandbox_attempts": { set: ["stages.validate.sandbox_attempts=1"] },
};

/** Every stage's config hash under these `--set`s. */
function hashes(sets: string[]): Record<string, string> {
  const runner = makeRunner(STAGES, { dir: tempDir(), sets });
  return Object.fromEntries(STAGES.map((stage) => [stage.name, runner.configHash(stage)]));
}

describe("operational settings", () => {
  it("are each named in this test's table", () => {
    const marked = [
      ...operationalPaths(rootConfigSchema, ""),
      ...STAGES.flatMap((stage) => operationalPaths(stage.configSchema, `stages.${stage.name}`)),
    ];
    expect(marked.sort()).toEqual(Object.keys(CHANGES).sort());
  });

  it("move no stage's config hash", () => {
    for (const [path, { set, base = [] }] of Object.entries(CHANGES)) {
      expect(hashes([...base, ...set]), path).toEqual(hashes(base));
    }
  });

  it("while a setting that shapes a record moves its stage's hash", () => {
    const before = hashes([]);
    const changed = (sets: string[]) => {
      const after = hashes(sets);
      return STAGES.map((s) => s.name).filter((name) => after[name] !== before[name]);
    };
    expect(changed(["stages.leetcode.seed=7"])).toEqual(["leetcode"]);
    expect(changed(["stages.leetcode.validation.max_tests=3"])).toEqual(["leetcode"]);
    expect(changed(["stages.filter.threshold=3"])).toEqual(["filter"]);
    expect(changed(["stages.validate.run_timeout_s=3"])).toEqual(["validate"]);
    expect(changed(["stages.simulate.execution.run_timeout_s=3"])).toEqual(["simulate"]);
    expect(changed(["stages.pack.knn.ef=100"])).toEqual(["pack"]);
    expect(changed(["llm.strong.sampling.temperature=0.2"])).toEqual(["simulate", "correct", "leetcode"]);
  });

  it("leave a complete stage complete, where a content setting makes it stale", async () => {
    const dir = tempDir();
    await makeRunner(TOY_STAGES, { dir }).run(["total"]);
    const faster = makeRunner(TOY_STAGES, { dir, sets: ["stages.expand.concurrency=2"] });
    expect(faster.status("expand").state).toBe("complete");
    expect((await faster.run(["total"])).map((r) => r.action)).toEqual(["skipped", "skipped", "skipped"]);
    const other = makeRunner(TOY_STAGES, { dir, sets: ["stages.expand.copies=4"] });
    expect(other.status("expand")).toMatchObject({
      state: "stale",
      reason: "its configuration changed: stages.expand.copies 3 -> 4",
    });
  });
});
