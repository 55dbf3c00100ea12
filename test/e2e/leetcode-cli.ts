// The pipeline CLI in a child process, for the leetcode stage tests: a data dir of its own, the
// given hub directory, and the test LLM server as the strong model's endpoint.
import type { PipelineRecord } from "../../pipeline/record.js";
import { StageStore } from "../../pipeline/store/index.js";
import { type CliResult, onSamples, runCli } from "../support/cli.js";

export function cli(
  args: string[],
  options: { dataDir: string; hub: string; llm: string },
): Promise<CliResult> {
  const argv = [...args, ...onSamples(options.dataDir, [`hub.endpoint=file:${options.hub}`])];
  return runCli(argv, { env: { OPENAI_BASE_URL: options.llm, OPENAI_API_KEY: "sk-leetcode-test" } });
}

export async function stored(dataDir: string, stage: string, rejects = false): Promise<PipelineRecord[]> {
  const out: PipelineRecord[] = [];
  for await (const r of new StageStore(dataDir, stage).read({ rejects })) out.push(r);
  return out;
}

export function manifestStats(dataDir: string, stage: string): Record<string, unknown> {
  return (new StageStore(dataDir, stage).manifest()?.stats ?? {}) as Record<string, unknown>;
}
