// What the simulate and correct stage tests share: the scripted LLM server, one embedded sandbox, and
// a Runner over a stand-in for the filter stage (hand-written records) and the two dialogue stages,
// with services built from the YAML the way `pnpm pipeline` builds them, and one run of a dialogue stage
// read back as its dialogues, rejects and statistics.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect } from "vitest";
import { z } from "zod";
import { loadConfig } from "../../pipeline/config/load.js";
import { type Dialogue, parseDialogue } from "../../pipeline/dialogue.js";
import { loadPrompt } from "../../pipeline/llm/prompts.js";
import { silentLogger } from "../../pipeline/log.js";
import type { PipelineRecord } from "../../pipeline/record.js";
import { Runner } from "../../pipeline/runner.js";
import { EmbeddedSandbox } from "../../pipeline/sandbox/index.js";
import type { CodeRunner } from "../../pipeline/sandbox/types.js";
import { createServices } from "../../pipeline/services.js";
import { defineStage, type Stage } from "../../pipeline/stage.js";
import { correctStage } from "../../stages/correct.js";
import { simulateStage } from "../../stages/simulate.js";
import { testConfig } from "../sandbox/helpers.js";
import { type LlmServer, type LlmServerOptions, startLlmServer } from "../support/llm-server.js";
import { collect } from "../support/runner-kit.js";
import { tempDir } from "../support/temp-dir.js";
import { STRONG_MODEL, scriptedReply, WEAK_MODEL } from "./script.js";

export function filterRecord(
  id: string,
  caseName: string,
  lang: string,
  query = "Solve the task.",
): PipelineRecord {
  return { id, query: `${query} [case:${caseName}]`, answer: "an answer", resource: "evolinstruct", lang };
}

/** Stands in for the filter stage: emits the given records. */
export function filterSource(records: () => PipelineRecord[]): Stage<unknown> {
  return defineStage({
    kind: "global",
    name: "filter",
    description: "test records",
    upstream: [],
    configSchema: z.object({}).passthrough(),
    async run(_ctx, emit) {
      for (const r of records()) await emit.out(r);
    },
  }) as Stage<unknown>;
}

export function llmYaml(url: string, extra = ""): string {
  const role = (model: string) =>
    `{provider: openai, base_url: "${url}", model: ${model}, concurrency: 8, retries: 0, timeout_s: 30${extra}}`;
  return `llm:\n  weak: ${role(WEAK_MODEL)}\n  strong: ${role(STRONG_MODEL)}\n`;
}

export function runnerFor(
  dir: string,
  records: () => PipelineRecord[],
  options: {
    url: string;
    sandbox: CodeRunner;
    stages?: string;
    llmExtra?: string;
    /** stages after simulate and correct (validate) */
    downstream?: Stage<unknown>[];
  },
): { runner: Runner; close(): Promise<void> } {
  const file = join(dir, "config.yaml");
  writeFileSync(
    file,
    `data_dir: ${join(dir, "data")}\n${llmYaml(options.url, options.llmExtra)}stages:\n${options.stages ?? ""}`,
  );
  const loaded = loadConfig({ file, sets: [] });
  const services = createServices(loaded.config, { dataDir: join(dir, "data"), log: silentLogger });
  const sandbox = options.sandbox;
  const runner = new Runner(
    [filterSource(records), simulateStage, correctStage, ...(options.downstream ?? [])] as Stage<unknown>[],
    loaded,
    {
      // the sandbox is shared by the file's tests; the LLM side is closed by `close`
      services: { ...services, sandbox: () => sandbox },
      log: silentLogger,
      progressStream: { write: () => true, isTTY: false } as unknown as NodeJS.WriteStream,
    },
  );
  return { runner, close: () => services.close() };
}

/** A test file's embedded sandbox and LLM server (scripted by default), started before its tests and closed after. */
export function scriptedWorld(fallback: LlmServerOptions["fallback"] = scriptedReply): {
  sandbox: EmbeddedSandbox;
  server: LlmServer;
} {
  const world = {
    sandbox: new EmbeddedSandbox(testConfig({ workers: 2 })),
    server: undefined as unknown as LlmServer,
  };
  beforeAll(async () => {
    world.server = await startLlmServer({ fallback });
  });
  afterAll(async () => {
    await world.server?.close();
    await world.sandbox.close();
  });
  return world;
}

/** The system prompt both dialogue stages publish each dialogue under. */
export const INTERPRETER = loadPrompt("simulate-interpreter").text;

/** What one run of a dialogue stage left: its dialogues and its rejects by the filter record they came from, its statistics. */
export interface DialogueRun {
  dialogues: Map<string, Dialogue>;
  rejects: Map<string, PipelineRecord>;
  stats: Record<string, unknown>;
}

/**
 * Runs `stage` (simulate or correct) to completion before the test file's tests, in a fresh directory
 * over `records`, configured by `stages` (the YAML under `stages:`), against the world's LLM server and
 * sandbox. Every record it publishes must parse as a dialogue. The maps and the statistics returned are
 * empty until then, and filled in place.
 */
export function dialogueStageRun(
  world: { sandbox: CodeRunner; server: LlmServer },
  stage: "simulate" | "correct",
  records: PipelineRecord[],
  stages: string,
): DialogueRun {
  const run: DialogueRun = { dialogues: new Map(), rejects: new Map(), stats: {} };
  beforeAll(async () => {
    const { runner, close } = runnerFor(tempDir(`cf-${stage}-`), () => records, {
      url: world.server.url,
      sandbox: world.sandbox,
      stages,
    });
    await runner.run([stage]);
    await close();
    const status = runner.status(stage);
    expect(status.state).toBe("complete");
    Object.assign(run.stats, status.manifest!.stats!);
    for (const r of await collect(runner.store(stage).read())) {
      const parsed = parseDialogue(r);
      expect(parsed.ok, JSON.stringify(parsed)).toBe(true);
      if (parsed.ok) run.dialogues.set(parsed.dialogue.sources[0]!, parsed.dialogue);
    }
    for (const r of await collect(runner.store(stage).read({ rejects: true }))) run.rejects.set(r.id, r);
  });
  return run;
}
