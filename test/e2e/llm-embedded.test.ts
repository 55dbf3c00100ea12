// The README's main command on configs/sample.yaml with no LLM server: `pnpm pipeline run filter`
// runs the scorer on the embedded model (here the tiny random GGUF from the test hub), every score
// parses, a rerun costs nothing, `status` and `--dry-run` name the provider, OPENAI_BASE_URL switches
// to a server, and offline without the model file the run stops before the first LLM call (exit 2).
import { describe, expect, it } from "vitest";
import type { PipelineRecord } from "../../pipeline/record.js";
import { StageStore } from "../../pipeline/store/stage-store.js";
import { FILE, REPO, useTinyModelHub } from "../llm/embedded/kit.js";
import { type CliResult, onSamples, runCli } from "../support/cli.js";
import { startLlmServer } from "../support/llm-server.js";
import { collect } from "../support/runner-kit.js";
import { tempDir } from "../support/temp-dir.js";

const model = useTinyModelHub();

/** The pipeline CLI on the sample config, the scorer's embedded model pointed at the test hub. */
function cli(dataDir: string, args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  const embedded =
    `{repo: ${REPO}, revision: main, file: ${FILE}, hub_endpoint: "${model.hub.url}", ` +
    "sequences: 2, context_size: 4096, threads: 1}";
  // the command and its positionals first (`--set` takes every word after it), the test's options
  // last so that its own --set wins over the ones here
  const split = args.findIndex((a) => a.startsWith("--"));
  const command = split < 0 ? args : args.slice(0, split);
  const options = split < 0 ? [] : args.slice(split);
  const argv = [
    ...command,
    ...onSamples(dataDir, [
      `llm.scorer.embedded=${embedded}`,
      "llm.scorer.sampling={temperature: 0, max_tokens: 24}",
    ]),
    ...options,
  ];
  return runCli(argv, { env: { OPENAI_BASE_URL: undefined, OPENAI_API_KEY: undefined, ...env } });
}

describe("pnpm pipeline run filter on the sample config with no server", () => {
  it("scores every record on the embedded model, and a rerun sends nothing", async () => {
    const dir = tempDir("cf-embedded-e2e-");
    const dry = await cli(dir, ["run", "filter", "--dry-run"]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stderr).toContain(`llm role scorer: embedded (node-llama-cpp), model ${REPO}/${FILE}@main`);
    expect(dry.stderr).toContain("fetched from the hub on first use");
    expect(dry.stderr).toMatch(/filter: would send \d+ requests/);

    const run = await cli(dir, ["run", "filter"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/embedded model .* on cpu/);
    const store = new StageStore(dir, "filter");
    const kept = await collect(store.read());
    const rejected = await collect(store.read({ rejects: true }));
    expect(kept.length + rejected.length).toBeGreaterThan(5);
    // The grammar makes every answer start with its score: nothing is unscored or reminded.
    for (const reject of rejected) expect(reject.reason).not.toBe("unscored");
    const rounds = [...kept, ...rejected.map((r) => r.record as PipelineRecord)].flatMap(
      (r) => (r.complexity ?? []) as { score: number | null; reminded: boolean; rationale: string }[],
    );
    expect(rounds.length).toBeGreaterThan(5);
    for (const round of rounds) {
      expect(round.score).toBeGreaterThanOrEqual(1);
      expect(round.reminded).toBe(false);
      expect(round.rationale.startsWith(String(round.score))).toBe(true);
    }
    const usage = store.manifest()!.usage!;
    expect(usage.requests).toBe(rounds.length);
    expect(usage.promptTokens).toBeGreaterThan(usage.requests * 100);

    const status = await cli(dir, ["status"]);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stderr).toContain(
      `model ${REPO}/${FILE}@main, GGUF ${dir}/models/${REPO}/main/${FILE} (on this machine)`,
    );

    const rerun = await cli(dir, ["run", "filter", "--force"]);
    expect(rerun.code, rerun.stderr).toBe(0);
    const again = store.manifest()!.usage!;
    expect(again.requests).toBe(0);
    expect(again.cachedRequests).toBe(rounds.length);
    expect((await collect(store.read())).map((r) => r.id).sort()).toEqual(kept.map((r) => r.id).sort());
  });

  it("offline without the model file: stops before the first LLM call, upstream saved, exit 2", async () => {
    const dir = tempDir("cf-embedded-offline-");
    const run = await cli(dir, [
      "run",
      "filter",
      "--set",
      "llm.scorer.embedded.hub_endpoint=http://127.0.0.1:1",
      "--set",
      "hub.retries=0",
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("dedup: complete");
    expect(run.stderr).toContain("no endpoint for the LLM role 'scorer', so it runs the embedded model");
    expect(run.stderr).toContain(`put the GGUF file ${FILE} at ${dir}/models/${REPO}/main/${FILE}`);
    expect(run.stderr).toContain("export OPENAI_BASE_URL=");
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(new StageStore(dir, "dedup").manifest()?.state).toBe("complete");
    expect(new StageStore(dir, "filter").manifest()?.usage?.requests ?? 0).toBe(0);
  });

  it("uses the server instead when OPENAI_BASE_URL is set", async () => {
    const server = await startLlmServer({});
    const dir = tempDir("cf-embedded-server-");
    const dry = await cli(dir, ["run", "filter", "--dry-run"], { OPENAI_BASE_URL: server.url });
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stderr).toContain(
      `llm role scorer: OpenAI-compatible server at ${server.url} ($OPENAI_BASE_URL), model Qwen/Qwen-72B-Chat`,
    );
    const run = await cli(dir, ["run", "filter"], { OPENAI_BASE_URL: server.url });
    expect(run.code, run.stderr).toBe(0);
    expect(server.count).toBeGreaterThan(5);
    expect(run.stderr).not.toContain("embedded model");
    await server.close();
  });
});
