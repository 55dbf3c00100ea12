// The pipeline CLI in a child process, for the leetcode stage tests: a data dir of its own, the
// given hub directory, and the test LLM server as the strong model's endpoint.
import { spawn } from "node:child_process";
import type { PipelineRecord } from "../../pipeline/record.js";
import { StageStore } from "../../pipeline/store/index.js";

const ROOT = new URL("../../", import.meta.url).pathname;
const MAIN = new URL("../../pipeline/main.ts", import.meta.url).pathname;

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function cli(
  args: string[],
  options: { dataDir: string; hub: string; llm: string },
): Promise<CliResult> {
  const argv = [
    "--import",
    "tsx",
    MAIN,
    ...args,
    "--config",
    "configs/sample.yaml",
    "--data-dir",
    options.dataDir,
    "--set",
    `hub.endpoint=file:${options.hub}`,
  ];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    OPENAI_BASE_URL: options.llm,
    OPENAI_API_KEY: "sk-leetcode-test",
  };
  return new Promise((resolve) => {
    const child = spawn(process.execPath, argv, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("exit", (code) => resolve({ code, stdout, stderr }));
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
