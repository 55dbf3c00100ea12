// configs/examples/own-data.yaml as README shows it, on its hand-written samples: a local JSONL read
// by columns, a hub chat dataset read pair by pair, and a dialogue audit, from download to export
// (the scorer is the test LLM server; the audit's and pack's dialogues run in the sandbox).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StageStore } from "../../pipeline/store/stage-store.js";
import { probeIsolationMode } from "../sandbox/helpers.js";
import { type CliResult, runCli } from "../support/cli.js";
import { type LlmServer, startLlmServer } from "../support/llm-server.js";
import { collect } from "../support/runner-kit.js";
import { tempDir } from "../support/temp-dir.js";

const CONFIG = "configs/examples/own-data.yaml";

describe("configs/examples/own-data.yaml", () => {
  const dir = tempDir("cf-own-example-");
  let server: LlmServer;
  let isolated = false;
  let run: CliResult;
  const cli = (...args: string[]) =>
    runCli([...args, "--config", CONFIG, "--data-dir", dir], {
      env: { OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "k", HF_ENDPOINT: undefined },
    });

  beforeAll(async () => {
    isolated = (await probeIsolationMode()) !== null;
    server = await startLlmServer({ latencyMs: 1, fallback: () => "Score: 5\n\nSeveral steps." });
    if (isolated) run = await cli("run", "export");
  });
  afterAll(async () => {
    await server?.close();
  });

  it("reads each source by its mapping and names them all in the card and in status", async (ctx) => {
    if (!isolated) ctx.skip();
    expect(run.code, run.stderr).toBe(0);
    const seeds = (await collect(new StageStore(dir, "normalize").read())) as Record<string, unknown>[];
    expect(seeds.map((s) => s.id).sort()).toEqual([
      "chat:000000.1",
      "chat:000000.2",
      "chat:000001.1",
      "chat:000002.1",
      "chat:000002.2",
      "mine:000000",
      "mine:000001",
      "mine:000002",
      "mine:000003",
      "mine:000004",
      "mine:000005",
    ]);
    const rejects = (await collect(new StageStore(dir, "normalize").read({ rejects: true }))) as Record<
      string,
      unknown
    >[];
    expect(rejects.map((r) => [r.id, r.reason])).toEqual([
      ["mine:000006", "missing-field"],
      ["chat:000003", "not-alternating"],
    ]);
    expect(rejects[0]!.detail).toBe("mine, data/sample/own/instructions.jsonl: row 6 has no `reply.text`");

    const card = readFileSync(join(dir, "export", "README.md"), "utf8");
    expect(card).toContain("Sources read by configuration");
    expect(card).toMatch(
      /\| mine \| local `data\/sample\/own\/instructions\.jsonl` \| sha256 `[0-9a-f]{12}` \| columns \|/,
    );
    expect(card).toMatch(/\| chat \| \[example-org\/code-chat\]\(.*\) \| `main` `[0-9a-f]{12}` \| chat \|/);
    const status = await cli("status");
    expect(status.stdout).toMatch(
      /source mine: data\/sample\/own\/instructions\.jsonl \(sha256 [0-9a-f]{12}\), adapter columns, 1 file, 6 seed pairs/,
    );
    expect(status.stdout).toMatch(
      /source chat: example-org\/code-chat \(main @ [0-9a-f]{12}\), adapter chat, 1 file, 5 seed pairs/,
    );
    expect(status.stdout).toMatch(
      /source dialogues: data\/sample\/code-feedback-dialogues\.jsonl \(sha256 [0-9a-f]{12}\), adapter dialogues, 1 file/,
    );
  });
});
