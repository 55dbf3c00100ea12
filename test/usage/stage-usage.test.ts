// A stage that asks two LLM replicas and two /run_code servers: what each endpoint did, and the
// programs each server ran, land in the stage's manifest (so `status` shows them after the run), and
// the run logs them as the stage ends.
// (A resumed run adding to it: usage.test.ts.)
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { loadConfig } from "../../pipeline/config/load.js";
import { Runner } from "../../pipeline/runner.js";
import { startSandboxServer } from "../../pipeline/sandbox/server.js";
import { createServices } from "../../pipeline/services.js";
import { defineStage, type Stage } from "../../pipeline/stage.js";
import { recordingLogger } from "../llm/helpers.js";
import { echoRunner } from "../support/echo-runner.js";
import { type LlmServer, startLlmServer } from "../support/llm-server.js";
import { tempDir } from "../support/temp-dir.js";

const askAndRun = defineStage({
  name: "ask",
  description: "asks the scorer about each number and runs it in the sandbox",
  upstream: [],
  kind: "record",
  configSchema: z.object({ count: z.number().int().default(8) }).strict(),
  input: async function* (ctx) {
    for (let i = 0; i < ctx.config.count; i++) yield { id: `n:${i}`, value: i };
  },
  concurrency: () => 4,
  process: async (record, ctx) => {
    const answer = await ctx.services
      .llm("scorer", ctx.usage)
      .chat([{ role: "user", content: `n ${record.id}` }]);
    const run = await ctx.services.sandbox().run({ code: `print(${record.value})`, language: "python" });
    return { out: [{ ...record, answer: answer.content, stdout: run.run_result?.stdout ?? "" }] };
  },
});

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

describe("usage per endpoint in a stage's manifest", () => {
  it("keeps what each LLM replica and sandbox server did, and logs it as the stage ends", async () => {
    const llms: LlmServer[] = await Promise.all([startLlmServer(), startLlmServer()]);
    const sandboxes = await Promise.all([
      startSandboxServer({ runner: echoRunner, port: 0, maxBodyBytes: 1 << 20 }),
      startSandboxServer({ runner: echoRunner, port: 0, maxBodyBytes: 1 << 20 }),
    ]);
    for (const s of [...llms, ...sandboxes]) closers.push(() => s.close());
    const dir = tempDir("cf-stage-usage-");
    closers.push(async () => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, "config.yaml");
    writeFileSync(
      file,
      [
        `data_dir: ${join(dir, "data")}`,
        "llm:",
        "  scorer:",
        "    provider: openai",
        `    base_url: [${llms.map((s) => s.url).join(", ")}]`,
        "    model: test-model",
        "    concurrency: 2",
        "sandbox:",
        `  url: [${sandboxes.map((s) => s.url).join(", ")}]`,
        "  workers: 2",
      ].join("\n"),
    );
    const run = async (count: number) => {
      const loaded = loadConfig({ file, sets: [`stages.ask.count=${count}`] });
      const log = recordingLogger();
      const services = createServices(loaded.config, { dataDir: join(dir, "data"), log });
      const runner = new Runner([askAndRun] as Stage<unknown>[], loaded, {
        services,
        log,
        progressStream: { write: () => true, isTTY: false } as unknown as NodeJS.WriteStream,
      });
      try {
        await runner.run(["ask"]);
      } finally {
        await services.close();
      }
      return { log, manifest: runner.status("ask").manifest! };
    };
    const first = await run(8);
    const endpoints = first.manifest.usage?.endpoints ?? {};
    const llmUrls = llms.map((s) => s.url);
    const sandboxUrls = sandboxes.map((s) => `${s.url}/run_code`);
    expect(Object.keys(endpoints).sort()).toEqual([...llmUrls, ...sandboxUrls].sort());
    const sum = (urls: string[]) => urls.reduce((a, u) => a + endpoints[u]!.requests, 0);
    expect(sum(llmUrls)).toBe(8);
    expect(sum(sandboxUrls)).toBe(8);
    for (const url of [...llmUrls, ...sandboxUrls]) expect(endpoints[url]!.requests).toBeGreaterThan(0);
    expect(first.manifest.usage?.requests).toBe(8);
    for (const url of llmUrls) {
      expect(
        first.log.lines.some((l) => l.startsWith(`info: ask: ${url}: `) && l.includes("mean latency")),
      ).toBe(true);
    }
    // the programs the sandbox servers ran: in all, and each server's, in the manifest and the log
    expect(first.manifest.sandbox?.runs).toBe(8);
    const ran = sandboxUrls.map((url) => first.manifest.sandbox?.endpoints?.[url]?.runs ?? 0);
    expect(ran.reduce((a, b) => a + b, 0)).toBe(8);
    expect(first.log.lines).toContain("info: ask: sandbox: 8 programs, 0.0 s busy");
    sandboxUrls.forEach((url, i) => {
      expect(
        first.log.lines.some(
          (l) => l.startsWith(`info: ask: ${url}: `) && l.endsWith(`, ${ran[i]} programs, 0.0 s busy`),
        ),
      ).toBe(true);
    });
  });
});
