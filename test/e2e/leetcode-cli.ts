// The pipeline CLI in a child process, for the leetcode stage tests: a data dir of its own, the
// given hub directory, and the test LLM server as the strong model's endpoint; and, for a test file,
// all three set up before its tests (the bundled sample as the hub) and removed after them.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import type { PipelineRecord } from "../../pipeline/record.js";
import { StageStore } from "../../pipeline/store/stage-store.js";
import { SAMPLE_ROOT } from "../sources/sample-parquet.js";
import { type CliResult, onSamples, runCli } from "../support/cli.js";
import { type LlmServer, startLlmServer } from "../support/llm-server.js";

/** `killWhen`: polled while the CLI runs; once true, the CLI gets SIGKILL. */
export function cli(
  args: string[],
  options: { dataDir: string; hub: string; llm: string },
  killWhen?: () => boolean,
): Promise<CliResult> {
  const argv = [...args, ...onSamples(options.dataDir, [`hub.endpoint=file:${options.hub}`])];
  return runCli(argv, {
    env: { OPENAI_BASE_URL: options.llm, OPENAI_API_KEY: "sk-leetcode-test" },
    ...(killWhen ? { killWhen } : {}),
  });
}

export async function stored(dataDir: string, stage: string, rejects = false): Promise<PipelineRecord[]> {
  const out: PipelineRecord[] = [];
  for await (const r of new StageStore(dataDir, stage).read({ rejects })) out.push(r);
  return out;
}

export function manifestStats(dataDir: string, stage: string): Record<string, unknown> {
  return (new StageStore(dataDir, stage).manifest()?.stats ?? {}) as Record<string, unknown>;
}

export interface LeetcodeCli {
  readonly server: LlmServer;
  readonly dataDir: string;
  /** `cli(args)` on this file's data dir, the bundled sample and the server */
  run(args: string[]): Promise<CliResult>;
}

/** A temporary data dir and the test LLM server for a test file's CLI runs on the bundled sample. */
export function useLeetcodeCli(prefix: string): LeetcodeCli {
  let root: string | undefined;
  let server: LlmServer | undefined;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), prefix));
    server = await startLlmServer();
  });
  afterAll(async () => {
    await server?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });
  const dataDir = () => join(root!, "data");
  return {
    get server() {
      return server!;
    },
    get dataDir() {
      return dataDir();
    },
    run: (args) => cli(args, { dataDir: dataDir(), hub: SAMPLE_ROOT, llm: server!.url }),
  };
}
