// Stages that run programs in the sandbox, for testing how the runner counts them (the manifest's
// `sandbox`): a record-wise stage that runs `value % 4` programs per record, and a global stage that
// runs one per record it reads. Behind them, our real /run_code server in front of a runner that
// runs nothing: it answers after a delay and reports a fixed execution time, counting what it served.
import { z } from "zod";
import { startSandboxServer } from "../../pipeline/sandbox/server.js";
import type { CodeRunner, RunCodeRequest, RunCodeResponse } from "../../pipeline/sandbox/types.js";
import { defineStage, type Stage } from "../../pipeline/stage.js";
import { echoResponse } from "./echo-runner.js";
import { numbersStage } from "./toy-stages.js";

/** The execution time every program reports: 125 ms, exact in binary, so sums are exact too. */
export const PROGRAM_S = 0.125;

async function runAll(runner: CodeRunner, codes: string[]): Promise<string | undefined> {
  for (const code of codes) {
    const response = await runner.run({ code, language: "python" });
    if (response.status !== "Success") return response.message || response.status;
  }
  return undefined;
}

export const programsStage = defineStage({
  name: "programs",
  description: "runs value % 4 programs per record in the sandbox",
  upstream: ["numbers"],
  kind: "record",
  configSchema: z.object({ concurrency: z.number().int().default(4) }).strict(),
  concurrency: (ctx) => ctx.config.concurrency,
  process: async (record, ctx) => {
    const value = record.value as number;
    const codes = Array.from({ length: value % 4 }, (_, i) => `print(${value}, ${i})`);
    const failed = await runAll(ctx.services.sandbox(), codes);
    if (failed) return { failed: { reason: "sandbox", detail: failed } };
    return { out: [record] };
  },
});

export const judgeStage = defineStage({
  name: "judge",
  description: "runs one program per record of programs (global)",
  upstream: ["programs"],
  kind: "global",
  configSchema: z.object({}).strict(),
  run: async (ctx, emit) => {
    const codes: string[] = [];
    for await (const record of ctx.read("programs")) codes.push(`print(${record.value as number})`);
    const failed = await runAll(ctx.services.sandbox(), codes);
    if (failed) throw new Error(failed);
    await emit.out({ id: "judged", n: codes.length });
  },
});

export const SANDBOX_TOY_STAGES = [numbersStage, programsStage, judgeStage] as Stage<unknown>[];

/** Programs `programs` runs for numbers 0..count-1. */
export function expectedPrograms(count: number): number {
  let n = 0;
  for (let value = 0; value < count; value++) n += value % 4;
  return n;
}

class TimedRunner implements CodeRunner {
  served = 0;
  constructor(private readonly delayMs: number) {}
  async run(request: RunCodeRequest): Promise<RunCodeResponse> {
    await new Promise((r) => setTimeout(r, Math.random() * this.delayMs));
    this.served++;
    return echoResponse(request, PROGRAM_S);
  }
  async close(): Promise<void> {}
}

/** A /run_code server answering after up to `delayMs`; `served()` counts the programs it answered. */
export async function timedRunCodeServer(
  delayMs: number,
): Promise<{ url: string; served: () => number; close: () => Promise<void> }> {
  const runner = new TimedRunner(delayMs);
  const server = await startSandboxServer({ runner, port: 0, maxBodyBytes: 1 << 20 });
  return { url: server.url, served: () => runner.served, close: () => server.close() };
}
