// leetcode's texts in batch mode, where the provider keeps failing some of their lines: those
// dialogues are rejects carrying the provider's reason (not failures that stop the run), the others
// are written, and a forced rerun replays the same rejects from the stage's ledger without a new batch.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli, stored } from "../e2e/leetcode-cli.js";
import { SAMPLE_ROOT } from "../sources/sample-parquet.js";
import { type LlmServer, startLlmServer } from "../support/llm-server.js";

// one round closes once nothing new was queued for settle_s (leetcode is a global stage)
const BATCH = [
  "--set",
  "llm.strong.provider=openai",
  "--set",
  "llm.strong.batch={provider: openai, poll_s: 0.02, max_poll_s: 0.1, retries: 0, settle_s: 0.3}",
];
// the prompt of the text before each solution (leetcode-stage.test.ts matches it the same way)
const TEXT_START = "Here is a list containing a series of dialogues";

let server: LlmServer;
let root: string;

const batchFailed = async (dataDir: string) =>
  (await stored(dataDir, "leetcode", true))
    .filter((r) => r.reason === "llm-batch-failed")
    .sort((a, b) => a.id.localeCompare(b.id));

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "cf-batch-leetcode-"));
  // the e2e leetcode tests' model: the server's default replies
  server = await startLlmServer({ batch: {} });
});
afterAll(async () => {
  await server?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

describe("leetcode in batch mode", () => {
  it("rejects a dialogue whose text the provider keeps failing, with its reason, and a forced rerun asks nothing", async () => {
    let failedTexts = 0;
    server.options.batch!.lineFault = (body) => {
      const last = body.messages.at(-1)?.content ?? "";
      if (!last.startsWith(TEXT_START) || JSON.stringify(body.messages).length % 2 !== 0) return undefined;
      failedTexts++;
      return "fail";
    };
    const options = { dataDir: join(root, "data"), hub: SAMPLE_ROOT, llm: server.url };
    const run = await cli(["run", "leetcode", ...BATCH], options);
    expect(run.code, run.stderr).toBe(0);
    expect(failedTexts).toBeGreaterThan(0);
    const rejects = await batchFailed(options.dataDir);
    expect(rejects.length).toBeGreaterThan(0);
    for (const r of rejects) expect(r.detail).toContain("injected: the model failed");
    expect((await stored(options.dataDir, "leetcode")).length).toBeGreaterThan(0);

    const batches = server.batch!.batches.size;
    expect(batches).toBeGreaterThan(0);
    const again = await cli(["run", "leetcode", "--force", ...BATCH], options);
    expect(again.code, again.stderr).toBe(0);
    expect(server.batch!.batches.size).toBe(batches);
    expect(await batchFailed(options.dataDir)).toEqual(rejects);
  });
});
