import { describe, expect, it } from "vitest";
import { planLaunch } from "../../pipeline/launch/plan.js";
import { makeRunner } from "../support/runner-kit.js";
import { tempDir } from "../support/temp-dir.js";
import { TOY_STAGES } from "../support/toy-stages.js";

const yaml = "stages:\n  numbers: {count: 6}\n";

describe("launch plan", () => {
  it("runs every incomplete upstream stage first, shards record-wise stages, and one process for a global stage", () => {
    const runner = makeRunner(TOY_STAGES, { dir: tempDir(), yaml });
    expect(planLaunch(runner, ["total"], { only: false, shards: 3 })).toEqual([
      { stage: "numbers", kind: "record", shards: 3, after: [] },
      { stage: "expand", kind: "record", shards: 3, after: ["numbers"] },
      { stage: "total", kind: "global", shards: 1, after: ["expand"] },
    ]);
  });

  it("leaves out upstream stages that are complete, so a cluster gets no job for them", async () => {
    const runner = makeRunner(TOY_STAGES, { dir: tempDir(), yaml });
    await runner.run(["numbers"]);
    expect(planLaunch(runner, ["total"], { only: false, shards: 2 })).toEqual([
      { stage: "expand", kind: "record", shards: 2, after: [] },
      { stage: "total", kind: "global", shards: 1, after: ["expand"] },
    ]);
  });

  it("with --only, a named stage still waits for a named stage further up through one left out", () => {
    const runner = makeRunner(TOY_STAGES, { dir: tempDir(), yaml });
    expect(planLaunch(runner, ["numbers", "total"], { only: true, shards: 4 })).toEqual([
      { stage: "numbers", kind: "record", shards: 4, after: [] },
      { stage: "total", kind: "global", shards: 1, after: ["numbers"] },
    ]);
  });
});
