// `run leetcode --dry-run` on the bundled sample: before any run it sends nothing, runs nothing and
// writes nothing, yet counts requests; after a run it finds every request it would send cached,
// which holds only if it builds each request (texts, chained turns, translations) as the run does.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SAMPLE_ROOT } from "../sources/sample-parquet.js";
import { type LlmServer, startLlmServer } from "../support/llm-server.js";
import { cli, stored } from "./leetcode-cli.js";

let server: LlmServer;
let root: string;
const dataDir = () => path.join(root, "data");
const options = () => ({ dataDir: dataDir(), hub: SAMPLE_ROOT, llm: server.url });
const sent = (stderr: string) => Number(/leetcode: would send (\d+) requests/.exec(stderr)?.[1]);

beforeAll(async () => {
  root = mkdtempSync(path.join(tmpdir(), "leetcode-estimate-"));
  server = await startLlmServer();
});

afterAll(async () => {
  await server?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

describe("leetcode --dry-run", () => {
  it("estimates without asking the model or running a solution, then finds a finished run's requests cached", async () => {
    const download = await cli(["run", "download"], options());
    expect(download.code, download.stderr).toBe(0);

    const before = await cli(["run", "leetcode", "--dry-run"], options());
    expect(before.code, before.stderr).toBe(0);
    expect(sent(before.stderr)).toBeGreaterThan(0);
    expect(before.stderr).toMatch(/solutions not yet run assumed to pass/);
    expect(server.count).toBe(0);
    expect(await stored(dataDir(), "leetcode")).toEqual([]);
    expect(existsSync(path.join(dataDir(), "leetcode/work/verdicts.jsonl"))).toBe(false);

    const run = await cli(["run", "leetcode"], options());
    expect(run.code, run.stderr).toBe(0);
    const asked = server.count;
    expect(asked).toBeGreaterThan(0);

    // a config change that makes the stage stale without changing any request
    const after = await cli(
      ["run", "leetcode", "--dry-run", "--set", "stages.leetcode.concurrency=3"],
      options(),
    );
    expect(after.code, after.stderr).toBe(0);
    expect(sent(after.stderr)).toBe(0);
    expect(after.stderr).not.toMatch(/assumed to pass \(an upper bound\)/);
    expect(server.count).toBe(asked);
  }, 240_000);
});
