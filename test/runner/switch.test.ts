// `stages.<name>.enabled: false` on a switchable stage (a dialogue method): it is not run, the stages
// after it go on without its records, and their manifests record it as switched off.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { loadConfig } from "../../pipeline/config/load.js";
import { ConfigError, UserError } from "../../pipeline/errors.js";
import { SWITCHED_OFF } from "../../pipeline/runner/plan.js";
import { Runner } from "../../pipeline/runner.js";
import { defineStage, type Stage } from "../../pipeline/stage.js";
import { STAGES } from "../../stages/index.js";
import { collect, makeRunner, noServices } from "../support/runner-kit.js";
import { tempDir } from "../support/temp-dir.js";
import { expandStage, numbersStage } from "../support/toy-stages.js";

const methodStage = { ...expandStage, switchable: true } as Stage<unknown>;

/** Like validate: reads every record of each of its upstream stages. */
const gatherStage = defineStage({
  name: "gather",
  description: "every record of numbers and expand",
  upstream: ["numbers", "expand"],
  kind: "global",
  configSchema: z.object({}).strict(),
  run: async (ctx, emit) => {
    for (const name of ["numbers", "expand"]) for await (const r of ctx.read(name)) await emit.out(r);
  },
});

const STAGES_UNDER_TEST = [numbersStage, methodStage, gatherStage] as Stage<unknown>[];
const yaml = (expand: string) => `stages:\n  numbers: {count: 9}\n  expand: {${expand}}\n`;

describe("a switched-off stage", () => {
  it("is not run; the stage after it goes on without it and records it as switched off", async () => {
    const dir = tempDir();
    const off = makeRunner(STAGES_UNDER_TEST, { dir, yaml: yaml("enabled: false") });
    const reports = await off.run(["gather"]);
    expect(reports.map((r) => [r.stage, r.action])).toEqual([
      ["numbers", "ran"],
      ["expand", "skipped"],
      ["gather", "ran"],
    ]);
    expect(off.status("expand")).toMatchObject({ state: "disabled", reason: "stages.expand.enabled: false" });
    expect(off.store("expand").manifest()).toBeUndefined();
    const gather = off.status("gather");
    expect(gather.state).toBe("complete");
    expect(gather.manifest!.upstream.expand).toBe(SWITCHED_OFF);
    expect((await collect(off.store("gather").read())).map((r) => r.id).sort()).toEqual(
      Array.from({ length: 9 }, (_, i) => `n:${i}`).sort(),
    );
  });

  it("switching it on makes the stage after it stale; off again leaves out what it made", async () => {
    const dir = tempDir();
    await makeRunner(STAGES_UNDER_TEST, { dir, yaml: yaml("enabled: false") }).run(["gather"]);

    const on = makeRunner(STAGES_UNDER_TEST, { dir, yaml: yaml("") });
    expect(on.status("gather")).toMatchObject({ state: "stale", reason: "upstream expand was switched on" });
    await on.run(["gather"]);
    expect(on.status("gather").manifest!.counts.out).toBe(18);

    const offAgain = makeRunner(STAGES_UNDER_TEST, { dir, yaml: yaml("enabled: false") });
    expect(offAgain.status("gather")).toMatchObject({
      state: "stale",
      reason: "upstream expand was switched off",
    });
    await offAgain.run(["gather"]);
    // expand's outputs are still on disk, but not part of this configuration
    expect(offAgain.status("gather").manifest!.counts.out).toBe(9);
    expect(await collect(offAgain.read("expand"))).toEqual([]);
  });

  it("naming it in `run` is refused with the key to change; a bad value or a stage that cannot be switched off is a config error", async () => {
    const dir = tempDir();
    const off = makeRunner(STAGES_UNDER_TEST, { dir, yaml: yaml("enabled: false") });
    const refused = await off.run(["expand"]).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(UserError);
    expect((refused as UserError).exitCode).toBe(2);
    expect((refused as Error).message).toMatch(
      /expand is switched off \(stages\.expand\.enabled: false in .*config\.yaml\)/,
    );

    expect(() => makeRunner(STAGES_UNDER_TEST, { dir, yaml: yaml("enabled: no") })).toThrow(
      /stages\.expand\.enabled \(line \d+\): must be true or false/,
    );
    expect(() =>
      makeRunner(STAGES_UNDER_TEST, { dir, yaml: "stages:\n  numbers: {enabled: false}\n" }),
    ).toThrow(ConfigError);
  });

  it("each dialogue method of the real pipeline can be switched off; validate then needs only the others", () => {
    const file = new URL("../../configs/default.yaml", import.meta.url).pathname;
    const sets = ["pack", "simulate", "correct", "leetcode"].map((s) => `stages.${s}.enabled=false`);
    const runner = new Runner(STAGES, loadConfig({ file, sets, dataDir: tempDir() }), {
      services: noServices,
    });
    for (const name of ["pack", "simulate", "correct", "leetcode"]) {
      expect(runner.status(name).state, name).toBe("disabled");
    }
    // validate's upstream are exactly those four: nothing it needs is missing
    expect(runner.status("validate").state).toBe("not started");
    expect(
      () =>
        new Runner(STAGES, loadConfig({ file, sets: ["stages.filter.enabled=false"] }), {
          services: noServices,
        }),
    ).toThrow(/stages\.filter\.enabled.*unknown key/);
  });
});
