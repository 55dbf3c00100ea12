// `pnpm pipeline eval model` with its roles in batch mode, in process: against the test server's
// Batches API (provider openai) and through batch files answered by test/support/run-batch.ts
// (provider files), compared with the online run of the same scripted model: the same results and
// metrics, each request answered once, every task waiting on the same step in one batch.
import { exec } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import yargs from "yargs";
import { evalCommand } from "../../pipeline/cli/eval.js";
import type { EmbeddedSandbox } from "../../pipeline/sandbox/index.js";
import { type SandboxServer, startSandboxServer } from "../../pipeline/sandbox/server.js";
import { taskOfPrompt, writeBenchmarkRepos } from "../eval/model/fixtures.js";
import { closeSandbox, testSandbox } from "../eval/model/sandbox.js";
import type { BatchApiOptions } from "../support/batch-api.js";
import { runCli } from "../support/cli.js";
import { startTestHub, type TestHub } from "../support/hub-server.js";
import { type LlmServer, type ReceivedRequest, startLlmServer } from "../support/llm-server.js";
import { tempDir } from "../support/temp-dir.js";

const GUIDANCE = "Look again at upper-case letters, at every name you use, and at when your loop ends.";

/** `fixer` answers wrong code first and the right code once it got feedback; `guide` guides. */
function reply(request: ReceivedRequest): string {
  const messages = request.body.messages;
  if (request.body.model === "guide") return GUIDANCE;
  const task = taskOfPrompt(messages[0]!.content);
  if (!task) return "I cannot tell which task this is.";
  const code = messages.length > 1 ? task.correct : task.wrong;
  return `Here is the solution:\n\`\`\`python\n${code}\n\`\`\`\nIt works.`;
}

const OPENAI = "{provider: openai, poll_s: 0.02, max_poll_s: 0.1}";

let hub: TestHub;
let llm: LlmServer;
let sandbox: EmbeddedSandbox;
let sandboxServer: SandboxServer;
let dir: string;
let config: string;

beforeAll(async () => {
  dir = tempDir("eval-model-batch-");
  writeBenchmarkRepos(path.join(dir, "hub"));
  hub = await startTestHub({ root: path.join(dir, "hub") });
  llm = await startLlmServer({ fallback: reply, batch: {} });
  sandbox = testSandbox();
  sandboxServer = await startSandboxServer({ runner: sandbox, port: 0, maxBodyBytes: 8 << 20 });
  config = path.join(dir, "config.yaml");
  writeFileSync(
    config,
    [
      `hub: {endpoint: "${hub.url}", retries: 0}`,
      `llm: {strong: {base_url: "${llm.url}", model: guide, retries: 0}}`,
      `sandbox: {url: "${sandboxServer.url}"}`,
      // the test hub has one revision per repo
      "eval: {model: {workers: 1, benchmarks: {mbpp: {revision: main}}}}",
      "",
    ].join("\n"),
  );
});
afterAll(async () => {
  await Promise.all([hub?.close(), llm?.close(), sandboxServer?.close()]);
  if (sandbox) await closeSandbox(sandbox);
});

function serve(options: BatchApiOptions = {}): void {
  llm.reset();
  llm.batch!.reset();
  for (const key of Object.keys(llm.options.batch!) as (keyof BatchApiOptions)[])
    delete llm.options.batch![key];
  Object.assign(llm.options.batch!, { delayMs: 0 }, options);
}

/** `eval model --model fixer` into DIR/out, with a response cache of its own under DIR/data-out. */
async function evalModel(out: string, ...args: string[]): Promise<{ stdout: string; error?: Error }> {
  let stdout = "";
  const write = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
    stdout += String(chunk);
    return true;
  });
  const quiet = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
  const argv = [
    ...["eval", "model", "--model", "fixer", "--base-url", llm.url, "--out", path.join(dir, out)],
    ...["--config", config, "--data-dir", path.join(dir, `data-${out}`), "--run-timeout", "2", ...args],
  ];
  try {
    await yargs(argv).command(evalCommand).strict().fail(false).parseAsync();
    return { stdout };
  } catch (error) {
    return { stdout, error: error as Error };
  } finally {
    write.mockRestore();
    quiet.mockRestore();
  }
}

const results = (out: string) => readFileSync(path.join(dir, out, "results.jsonl"), "utf8");
/** the records without `cached`, which says where the answer came from, in task order */
const records = (out: string) =>
  results(out)
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const { cached: _, ...rest } = JSON.parse(line);
      return rest;
    })
    .sort((a, b) => `${a.task_id}#${a.round}`.localeCompare(`${b.task_id}#${b.round}`));
const metrics = (out: string) => {
  const { interrupted: _, ...rest } = JSON.parse(readFileSync(path.join(dir, out, "metrics.json"), "utf8"));
  return rest;
};
const ledger = (out: string) =>
  readdirSync(path.join(dir, out, "batch"))
    .filter((n) => n.endsWith(".batch.json"))
    .map((n) => JSON.parse(readFileSync(path.join(dir, out, "batch", n), "utf8")))
    .sort((a, b) => a.round - b.round);
const twice = () => [...llm.answered.entries()].filter(([, n]) => n > 1);

describe("eval model in batch mode", () => {
  it("provider openai: the online run's results and metrics, a round per step (the guidance too), each request answered once", async () => {
    serve();
    const online = await evalModel("online", "--benchmark", "humaneval", "--feedback", "human");
    expect(online.error).toBeUndefined();
    const requests = llm.count;
    // three tasks: round 1, guidance, round 2
    expect(requests).toBe(9);

    serve();
    const run = await evalModel(
      "openai",
      ...["--benchmark", "humaneval", "--feedback", "human"],
      ...["--set", `llm.weak.batch=${OPENAI}`, "--set", `llm.strong.batch=${OPENAI}`],
    );
    expect(run.error).toBeUndefined();
    expect(records("openai")).toEqual(records("online"));
    expect(metrics("openai")).toEqual(metrics("online"));
    expect(llm.count).toBe(requests);
    expect(twice()).toEqual([]);
    // with one worker online, every task still went into each round's one batch
    expect(llm.batch!.batches.size).toBe(3);
    expect(ledger("openai").map((e) => [e.round, e.role, e.total, e.state])).toEqual([
      [1, "weak", 3, "collected"],
      [2, "strong", 3, "collected"],
      [3, "weak", 3, "collected"],
    ]);

    // a rerun, and the roles back online, send nothing
    llm.reset();
    const again = await evalModel("openai", "--benchmark", "humaneval", "--feedback", "human", "--force");
    expect(again.error).toBeUndefined();
    expect(llm.count).toBe(0);
    expect(records("openai")).toEqual(records("online"));
  });

  it("--no-wait submits a round and stops (exit 3); the next run collects it", async () => {
    serve({ delayMs: 60_000 });
    const set = ["--set", `llm.weak.batch=${OPENAI}`];
    const parked = await evalModel("no-wait", "--benchmark", "mbpp", "--no-wait", ...set);
    expect(parked.error).toMatchObject({ exitCode: 3 });
    expect(parked.error?.message).toMatch(/^eval model: waiting for batch: 1 batch\(es\) submitted/);
    expect(llm.batch!.batches.size).toBe(1);
    expect(results("no-wait")).not.toMatch(/"round":[1-9]/);

    llm.options.batch!.delayMs = 0;
    const done = await evalModel("no-wait", "--benchmark", "mbpp", ...set);
    expect(done.error).toBeUndefined();
    // round 1 was collected from the batch the first run left, round 2 was a batch of its own
    expect(llm.batch!.batches.size).toBe(2);
    expect(twice()).toEqual([]);
    expect(metrics("no-wait").rounds.map((r: { pass_at_1: number }) => r.pass_at_1)).toEqual([0, 1]);
  });

  it("survives a kill -9 after the batch was created and before its id came back: the rerun finds it, nothing is asked twice", async () => {
    let hang = true;
    serve({ hang: (step) => hang && step === "created" });
    const args = [
      ...["eval", "model", "--model", "fixer", "--base-url", llm.url, "--benchmark", "mbpp"],
      ...["--out", path.join(dir, "killed"), "--config", config, "--data-dir", path.join(dir, "data-killed")],
      ...["--run-timeout", "2", "--set", `llm.weak.batch=${OPENAI}`],
    ];
    const killed = await runCli(args, { killWhen: () => llm.batch!.batches.size > 0 });
    expect(killed.signal).toBe("SIGKILL");
    expect(ledger("killed").map((e) => [e.round, e.batchId])).toEqual([[1, undefined]]);
    hang = false;
    const resumed = await runCli(args);
    expect(resumed.code, resumed.stderr).toBe(0);
    // round 1 was the batch the killed run created; round 2 a batch of its own
    expect(llm.batch!.batches.size).toBe(2);
    expect(twice()).toEqual([]);
    expect(metrics("killed").rounds.map((r: { pass_at_1: number }) => r.pass_at_1)).toEqual([0, 1]);
  });

  it("provider files: stops with exit 3 and the command at each round, and completes once the files are answered", async () => {
    serve();
    const online = await evalModel("files-online", "--benchmark", "mbpp");
    expect(online.error).toBeUndefined();
    const requests = llm.count;

    serve();
    const command = "node --import tsx test/support/run-batch.ts -i {input} -o {output} --model {model}";
    const args = ["--benchmark", "mbpp", "--set", `llm.weak.batch={provider: files, command: "${command}"}`];
    for (const round of [1, 2]) {
      const waiting = await evalModel("files", ...args);
      expect(waiting.error).toMatchObject({ exitCode: 3 });
      const message = waiting.error!.message;
      expect(message).toContain(
        `eval model: waiting for batch: 2 requests in 1 file(s) under ${path.join(dir, "files", "batch")}`,
      );
      const commands = message
        .split("\n")
        .slice(1)
        .map((line) => line.trim());
      expect(commands).toHaveLength(1);
      expect(commands[0]).toMatch(
        /^node --import tsx test\/support\/run-batch\.ts -i \S+\.input\.jsonl -o \S+\.output\.jsonl --model fixer$/,
      );
      // nothing was asked until the command ran; a waiting rerun writes no second file
      expect(llm.count).toBe(2 * (round - 1));
      const still = await evalModel("files", ...args);
      expect(still.error).toMatchObject({ exitCode: 3 });
      expect(ledger("files").filter((e) => e.round === round)).toHaveLength(1);
      // the test's own server answers it: the command must not block this process
      await promisify(exec)(commands[0]!, {
        cwd: path.join(import.meta.dirname, "../.."),
        env: { ...process.env, OPENAI_BASE_URL: llm.url },
      });
    }
    const done = await evalModel("files", ...args);
    expect(done.error).toBeUndefined();
    expect(records("files")).toEqual(records("files-online"));
    expect(metrics("files")).toEqual(metrics("files-online"));
    expect(llm.count).toBe(requests);
    expect(twice()).toEqual([]);
  });
});
