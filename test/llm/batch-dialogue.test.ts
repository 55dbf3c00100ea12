// Multi-turn stages in batch mode: simulate and correct with the weak and strong roles on the test
// server's Batches API make the online run's dialogues, each dialogue step of every record going out
// together: as many rounds as the longest dialogue has steps, and no request answered twice.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StageStore } from "../../pipeline/store/stage-store.js";
import { STRONG_MODEL, scriptedReply, WEAK_MODEL } from "../dialogue-kit/script.js";
import { cli } from "../e2e/kit.js";
import { type LlmServer, startLlmServer } from "../support/llm-server.js";
import { collect } from "../support/runner-kit.js";
import { tempDir } from "../support/temp-dir.js";

const SECRET = "sk-batch-dialogue-41aa";
const SETS = [
  ["llm.weak.model", WEAK_MODEL],
  ["llm.strong.model", STRONG_MODEL],
  ["llm.weak.provider", "openai"],
  ["llm.strong.provider", "openai"],
].flatMap(([k, v]) => ["--set", `${k}=${v}`]);
const BATCH = ["weak", "strong"].flatMap((role) => [
  "--set",
  `llm.${role}.batch={provider: openai, poll_s: 0.02, max_poll_s: 0.1}`,
]);

let server: LlmServer;
const env = () => ({ OPENAI_BASE_URL: server.url, OPENAI_API_KEY: SECRET });
const outputs = async (dir: string, stage: string) =>
  (await collect(new StageStore(dir, stage).read()))
    .map((r) => JSON.stringify(r).replace(/"time_s":[\d.]+/g, '"time_s":0'))
    .sort();

/** simulate's rejects for lines the provider kept failing, in id order */
const batchFailed = async (dir: string) =>
  (await collect(new StageStore(dir, "simulate").read({ rejects: true })))
    .filter((r) => r.reason === "llm-batch-failed")
    .sort((a, b) => a.id.localeCompare(b.id));

beforeAll(async () => {
  server = await startLlmServer({ fallback: scriptedReply, requireKey: SECRET, batch: {} });
});
afterAll(() => server.close());

describe("simulate and correct in batch mode", () => {
  it("make the online dialogues in rounds, every request answered once", async () => {
    const online = tempDir("cf-batch-dialogue-online-");
    const run = await cli(online, ["run", "simulate", "correct", ...SETS], env());
    expect(run.code, run.stderr).toBe(0);
    const onlineRequests = server.count;

    server.reset();
    server.batch!.reset();
    const dir = tempDir("cf-batch-dialogue-");
    const batched = await cli(dir, ["run", "simulate", "correct", ...SETS, ...BATCH], env());
    expect(batched.code, batched.stderr).toBe(0);
    for (const stage of ["simulate", "correct"]) {
      expect(await outputs(dir, stage)).toEqual(await outputs(online, stage));
    }
    expect(server.count).toBe(onlineRequests);
    expect([...server.answered.values()].every((n) => n === 1)).toBe(true);
    // rounds: far fewer batches than requests, each holding the step of many dialogues
    const batches = [...server.batch!.batches.values()];
    expect(batches.length).toBeLessThan(onlineRequests / 3);
    expect(Math.max(...batches.map((b) => b.request_counts.total))).toBeGreaterThan(4);
  });

  it("reject a dialogue whose line the provider keeps failing, with its reason, and a rerun asks nothing", async () => {
    server.reset();
    server.batch!.reset();
    server.options.batch!.lineFault = (body) =>
      JSON.stringify(body.messages).length % 4 === 0 ? "fail" : undefined;
    try {
      const dir = tempDir("cf-batch-dialogue-fail-");
      const once = BATCH.map((a) => a.replace("poll_s: 0.02", "poll_s: 0.02, retries: 0"));
      const run = await cli(dir, ["run", "simulate", ...SETS, ...once], env());
      expect(run.code, run.stderr).toBe(0);
      const rejects = await batchFailed(dir);
      expect(rejects.length).toBeGreaterThan(0);
      for (const r of rejects) expect(r.detail).toContain("injected: the model failed");
      const asked = server.batch!.batches.size;
      const again = await cli(dir, ["run", "simulate", "--force", ...SETS, ...once], env());
      expect(again.code, again.stderr).toBe(0);
      expect(server.batch!.batches.size).toBe(asked);
      expect(await batchFailed(dir)).toEqual(rejects);
    } finally {
      server.options.batch!.lineFault = undefined;
    }
  });
});
