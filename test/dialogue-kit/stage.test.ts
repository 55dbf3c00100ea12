// What simulate and correct share through dialogueStage() (stages/dialogue-kit/stage.ts), checked on
// both: a record without a query is an `empty-query` reject before any model is asked, only the
// selected languages are read, both are dialogue methods after filter, and the records in flight
// default to twice the lead role's concurrency plus the programs the sandbox runs at once (with
// `sandbox.url` and no `workers`: twice the workers the server says it runs, once the stage has opened).
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../pipeline/config/load.js";
import type { RootConfig } from "../../pipeline/config/schema.js";
import { EmbeddedSandbox, sandboxConfigSchema } from "../../pipeline/sandbox/index.js";
import { startSandboxServer } from "../../pipeline/sandbox/server.js";
import type { StageContext } from "../../pipeline/stage.js";
import { correctStage } from "../../stages/correct.js";
import { simulateStage } from "../../stages/simulate.js";
import { recordingLogger } from "../llm/helpers.js";
import { collect } from "../support/runner-kit.js";
import { tempDir } from "../support/temp-dir.js";
import { filterRecord, runnerFor, scriptedWorld } from "./kit.js";

const world = scriptedWorld();
const { sandbox } = world;

const RECORDS = [
  { ...filterRecord("f:blank", "py-works", "python"), query: "   " },
  { ...filterRecord("f:none", "py-works", "python"), query: undefined },
  // a language neither stage takes here: never read
  filterRecord("f:other", "py-works", "java"),
];
const STAGES = "  simulate: {languages: [python]}\n  correct: {languages: [python], count: 10}\n";

describe("dialogueStage(), as simulate and correct use it", () => {
  it("rejects a record without a query in both stages without a model request", async () => {
    const dir = tempDir("cf-dialogue-stage-");
    const { runner, close } = runnerFor(dir, () => RECORDS, {
      url: world.server.url,
      sandbox,
      stages: STAGES,
    });
    try {
      await runner.run(["simulate", "correct"]);
      for (const stage of ["simulate", "correct"]) {
        const rejects = await collect(runner.store(stage).read({ rejects: true }));
        expect(rejects.map((r) => [r.id, r.reason])).toEqual([
          ["f:blank", "empty-query"],
          ["f:none", "empty-query"],
        ]);
        expect(await collect(runner.store(stage).read())).toEqual([]);
      }
      expect(world.server.requests).toHaveLength(0);
    } finally {
      await close();
    }
  });

  it("declares both as dialogue methods after filter, in flight twice the lead role plus the sandbox", () => {
    const { config } = loadConfig({
      sets: ["llm.weak.concurrency=5", "llm.strong.concurrency=7", "sandbox.workers=3"],
    });
    const ctx = <C>(stageConfig: C) =>
      ({ config: stageConfig, root: config as RootConfig }) as unknown as StageContext<C>;
    expect(simulateStage.upstream).toEqual(["filter"]);
    expect(correctStage.upstream).toEqual(["filter"]);
    expect(simulateStage.switchable && correctStage.switchable).toBe(true);
    // simulate's lead is its strong role, correct's its only role
    const simulate = simulateStage.configSchema.parse({});
    expect(simulateStage.concurrency!(ctx(simulate))).toBe(2 * 7 + 3);
    const weakLed = correctStage.configSchema.parse({ role: "weak" });
    expect(correctStage.concurrency!(ctx(weakLed))).toBe(2 * 5 + 3);
    const fixed = correctStage.configSchema.parse({ concurrency: 4, execution: { concurrency: 9 } });
    expect(correctStage.concurrency!(ctx(fixed))).toBe(4);
    const ownSandbox = simulateStage.configSchema.parse({ execution: { concurrency: 9 } });
    expect(simulateStage.concurrency!(ctx(ownSandbox))).toBe(2 * 7 + 9);
  });

  it("with sandbox.url and no workers, counts twice the workers the server says it runs, asked at open", async () => {
    const embedded = new EmbeddedSandbox(sandboxConfigSchema.parse({ workers: 3 }));
    const server = await startSandboxServer({ runner: embedded, port: 0, maxBodyBytes: 1 << 20 });
    try {
      const { config } = loadConfig({ sets: ["llm.strong.concurrency=7", `sandbox.url=${server.url}`] });
      const log = recordingLogger();
      const ctx = {
        config: simulateStage.configSchema.parse({}),
        root: config as RootConfig,
        log,
      } as unknown as StageContext<ReturnType<typeof simulateStage.configSchema.parse>>;
      await simulateStage.open!(ctx);
      expect(simulateStage.concurrency!(ctx)).toBe(2 * 7 + 2 * 3);
      expect(log.lines).toEqual([expect.stringContaining("6 programs at once")]);
    } finally {
      await server.close();
      await embedded.close();
    }
  });
});
