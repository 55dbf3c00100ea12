// What the end-to-end filter tests share: the pipeline CLI in a child process, on the bundled
// samples, against the test LLM server, and one uninterrupted reference run per test file that
// every other run must end up agreeing with.
import { afterAll, beforeAll, expect } from "vitest";
import { StageStore } from "../../pipeline/store/stage-store.js";
import { type CliResult, onSamples, runCli } from "../support/cli.js";
import { type LlmServer, type ReceivedRequest, startLlmServer } from "../support/llm-server.js";
import { collect } from "../support/runner-kit.js";
import { tempDir } from "../support/temp-dir.js";

export const CONCURRENCY = 6;
// Every run sends this key and the server wants it; no file or line may ever show it.
export const SECRET = "sk-e2e-secret-5f3a9c";
// USD per million tokens for the sample config's scorer, so that `status` has a cost to show.
export const PRICE = { prompt: 1000, completion: 2000 };

/** Runs the pipeline CLI on the samples against the test LLM server; `killWhen` is polled and, once true, the child gets `killSignal` (SIGKILL). */
export function cli(
  dataDir: string,
  args: string[],
  env: Record<string, string | undefined>,
  killWhen?: () => boolean,
  killSignal?: NodeJS.Signals,
): Promise<CliResult> {
  const argv = [
    ...args,
    ...onSamples(dataDir, [
      "hub.endpoint=file:data/sample",
      `llm.scorer.concurrency=${CONCURRENCY}`,
      // these runs are about the OpenAI-compatible path: without OPENAI_BASE_URL the scorer is an
      // unconfigured server, not the embedded model (test/llm-embedded runs that one)
      "llm.scorer.provider=openai",
      `llm.prices.Qwen/Qwen-72B-Chat={prompt: ${PRICE.prompt}, completion: ${PRICE.completion}}`,
    ]),
  ];
  return runCli(argv, {
    env: { OPENAI_API_KEY: undefined, OPENAI_BASE_URL: undefined, ...env },
    killWhen,
    ...(killSignal ? { killSignal } : {}),
  });
}

export const isRound2 = (r: ReceivedRequest) =>
  r.body.messages[0]!.content.includes("5 Points - Expert Level");

/** A stage's outputs and rejects, each sorted, as JSON lines: equal for equal outcomes. */
export async function outcomeOf(dataDir: string): Promise<{ kept: string[]; rejected: string[] }> {
  const store = new StageStore(dataDir, "filter");
  return {
    kept: (await collect(store.read())).map((r) => JSON.stringify(r)).sort(),
    rejected: (await collect(store.read({ rejects: true }))).map((r) => JSON.stringify(r)).sort(),
  };
}

export interface Reference {
  kept: string[];
  rejected: string[];
  /** requests the server received for the whole run */
  requests: number;
  stderr: string;
}

export interface ReferenceRun {
  readonly server: LlmServer;
  readonly dir: string;
  readonly reference: Reference;
  /** the environment of a run against the server, with the key */
  env(): Record<string, string>;
}

/** Starts the server and makes the reference run before the file's tests; cleans up after them. */
export function useReferenceRun(prefix: string): ReferenceRun {
  let server: LlmServer | undefined;
  let reference: Reference | undefined;
  const dir = tempDir(prefix);
  const env = () => ({ OPENAI_BASE_URL: server!.url, OPENAI_API_KEY: SECRET });
  beforeAll(async () => {
    server = await startLlmServer({ latencyMs: 15, requireKey: SECRET });
    const run = await cli(dir, ["run", "filter"], env());
    expect(run.code, run.stderr).toBe(0);
    reference = { ...(await outcomeOf(dir)), requests: server.count, stderr: run.stderr };
    expect(reference.kept.length).toBeGreaterThan(0);
    expect(reference.rejected.length).toBeGreaterThan(0);
    expect(server.requests.filter(isRound2).length).toBeGreaterThan(20);
  });
  afterAll(async () => {
    await server?.close();
  });
  return {
    get server() {
      return server!;
    },
    get dir() {
      return dir;
    },
    get reference() {
      return reference!;
    },
    env,
  };
}
