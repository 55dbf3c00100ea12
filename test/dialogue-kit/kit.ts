// What the simulate and correct stage tests share: the scripted LLM server, one embedded sandbox, and
// a Runner over a stand-in for the filter stage (hand-written records) and the two dialogue stages,
// with services built from the YAML the way `pnpm pipeline` builds them.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { z } from "zod";
import { loadConfig } from "../../pipeline/config/load.js";
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
  options: { url: string; sandbox: CodeRunner; stages?: string; llmExtra?: string },
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
    [filterSource(records), simulateStage, correctStage] as Stage<unknown>[],
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
