// `pnpm pipeline eval model` end to end, in process: hand-written tasks in the four benchmarks'
// layouts served by the test hub, models played by the test LLM server (one that answers with the
// canonical solutions, one that fixes its code only once it gets feedback, one that never does,
// one that answers without code), judged in the embedded sandbox.

import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, truncateSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import yargs from "yargs";
import { evalCommand } from "../../pipeline/cli/eval.js";
import type { EmbeddedSandbox } from "../../pipeline/sandbox/index.js";
import { type SandboxServer, startSandboxServer } from "../../pipeline/sandbox/server.js";
import { HUMANEVAL_TASKS, taskOfPrompt, writeBenchmarkRepos } from "../eval/model/fixtures.js";
import { closeSandbox, testSandbox } from "../eval/model/sandbox.js";
import { startTestHub, type TestHub } from "../support/hub-server.js";
import {
  type LlmServer,
  lastUserMessage,
  type ReceivedRequest,
  startLlmServer,
} from "../support/llm-server.js";
import { freePort } from "../support/ports.js";
import { present, tmpfsProblem } from "../support/required.js";
import { tempDir } from "../support/temp-dir.js";

const canMount = present("TMPFS", tmpfsProblem());

const GUIDANCE = "Look again at upper-case letters, at every name you use, and at when your loop ends.";

/** What each test model answers; the guide writes the same guidance whatever it is shown. */
function reply(request: ReceivedRequest): string {
  const messages = request.body.messages;
  const task = taskOfPrompt(messages[0]!.content);
  if (request.body.model === "guide") return GUIDANCE;
  if (!task) return "I cannot tell which task this is.";
  const fenced = (code: string) => `Here is the solution:\n\`\`\`python\n${code}\n\`\`\`\nIt works.`;
  switch (request.body.model) {
    case "correct":
      return fenced(task.correct);
    case "fixer":
      return messages.length > 1 ? fenced(task.correct) : fenced(task.wrong);
    case "stubborn":
      return fenced(task.wrong);
    case "prose":
      return "I would go through the input one item at a time and keep what the task asks for.";
    default:
      return "unknown model";
  }
}

let hub: TestHub;
let llm: LlmServer;
let sandbox: EmbeddedSandbox;
let sandboxServer: SandboxServer;
let dir: string;
let config: string;

beforeAll(async () => {
  dir = tempDir("eval-model-");
  writeBenchmarkRepos(path.join(dir, "hub"));
  hub = await startTestHub({ root: path.join(dir, "hub") });
  llm = await startLlmServer({ fallback: reply });
  // Every CLI run talks to one sandbox through its /run_code server (a remote sandbox, as
  // `sandbox.url` configures), so the file opens and closes one embedded sandbox, not one per run.
  sandbox = testSandbox();
  sandboxServer = await startSandboxServer({ runner: sandbox, port: 0, maxBodyBytes: 8 << 20 });
  config = path.join(dir, "config.yaml");
  // The EvalPlus sets are pinned to real commits; the test hub has one revision per repo.
  writeFileSync(
    config,
    [
      `hub: {endpoint: "${hub.url}", retries: 0}`,
      `llm: {strong: {base_url: "${llm.url}", model: guide, retries: 0}}`,
      `sandbox: {url: "${sandboxServer.url}"}`,
      "eval:",
      "  model:",
      "    workers: 3",
      "    benchmarks:",
      "      humaneval+: {revision: main}",
      "      mbpp: {revision: main}",
      "      mbpp+: {revision: main}",
      "",
    ].join("\n"),
  );
});
afterAll(async () => {
  await Promise.all([hub?.close(), llm?.close(), sandboxServer?.close()]);
  if (sandbox) await closeSandbox(sandbox);
});

interface Run {
  stdout: string;
  error?: Error;
}

async function evalModel(model: string, out: string, ...args: string[]): Promise<Run> {
  let stdout = "";
  const write = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
    stdout += String(chunk);
    return true;
  });
  const quiet = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
  const argv = ["eval", "model", "--model", model, "--out", path.join(dir, out)];
  if (!args.includes("--base-url")) argv.push("--base-url", llm.url);
  argv.push("--config", config, "--data-dir", path.join(dir, "data"), "--run-timeout", "2", ...args);
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

const lines = (out: string) =>
  readFileSync(path.join(dir, out, "results.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line));
const metrics = (out: string) => JSON.parse(readFileSync(path.join(dir, out, "metrics.json"), "utf8"));
const passAt1 = (out: string) => metrics(out).rounds.map((r: { pass_at_1: number | null }) => r.pass_at_1);

describe("eval model", () => {
  it("scores a model that answers with the canonical solutions 100% in round 1, on all four benchmarks", async () => {
    for (const benchmark of ["humaneval", "humaneval+", "mbpp", "mbpp+"]) {
      const out = `correct-${benchmark}`;
      const run = await evalModel("correct", out, "--benchmark", benchmark);
      expect(run.error).toBeUndefined();
      expect(passAt1(out)).toEqual([1, 1]);
      expect(run.stdout).toMatch(/^round\s+pass@1\s+passed\s+tasks/m);
      expect(run.stdout).toMatch(/^1\s+100\.0%/m);
      // greedy decoding: every request asks for temperature 0
      expect(llm.requests.every((r) => r.body.temperature === 0)).toBe(true);
      expect(lines(out).every((line) => line.round <= 1)).toBe(true);
    }
    // MBPP's row without tests is recorded, not scored
    expect(metrics("correct-mbpp")).toMatchObject({ tasks: 2, invalid_tasks: 1 });
    expect(lines("correct-mbpp").find((l) => l.task_id === "603")).toMatchObject({
      outcome: "invalid-task",
      reason: expect.stringContaining('"test_list" is empty'),
    });
    expect(metrics("correct-humaneval+").dataset.repo).toBe("evalplus/humanevalplus");
  });

  it("raises the round-2 figure for a model that fixes its code after execution feedback, with the paper's three feedback cases", async () => {
    llm.reset();
    const run = await evalModel("fixer", "fixer", "--benchmark", "humaneval");
    expect(run.error).toBeUndefined();
    expect(passAt1("fixer")).toEqual([0, 1]);
    expect(run.stdout).toMatch(/^1\s+0\.0%\s+0\s+3\s+1\s+1\s+1\s+0\s*$/m);
    expect(run.stdout).toMatch(/^2\s+100\.0%\s+3\s+3/m);
    const first = (id: string) => lines("fixer").find((l) => l.task_id === id && l.round === 1);
    expect(first("HumanEval/0")).toMatchObject({
      outcome: "wrong-output",
      feedback: "Execution result: \nInput: count_vowels('AEIOU')\nExpected output: 5\nActual output: 0",
    });
    expect(first("HumanEval/1").outcome).toBe("runtime-error");
    expect(first("HumanEval/1").feedback).toMatch(
      /^Execution result: \nTraceback \(most recent call last\):/,
    );
    expect(first("HumanEval/1").feedback).toContain("NameError: name 'minimum' is not defined");
    expect(first("HumanEval/2")).toMatchObject({
      outcome: "timeout",
      feedback: "Execution result: \nExecution timed out",
    });
    // the record keeps what the model was told and what it answered
    expect(first("HumanEval/0").prompt).toContain(
      "Here is the given code to do completion: \n```python \ndef count_vowels",
    );
    expect(first("HumanEval/0").code).toBe(HUMANEVAL_TASKS["HumanEval/0"]!.wrong.trimEnd());
    // round 2 answered the conversation with the feedback as its last user turn
    const second = llm.requests.filter((r) => r.body.messages.length === 3);
    expect(second).toHaveLength(3);
    expect(second.map(lastUserMessage).sort()[0]).toMatch(/^Execution result: /);
  });

  it("leaves both figures at zero for a model that never fixes its code, and records answers without code", async () => {
    await evalModel("stubborn", "stubborn", "--benchmark", "mbpp+");
    expect(passAt1("stubborn")).toEqual([0, 0]);
    expect(lines("stubborn").filter((l) => l.round === 2)).toHaveLength(2);
    expect(lines("stubborn").find((l) => l.task_id === "601" && l.round === 1).feedback).toBe(
      "Execution result: \nInput: strip_char('banana', 'a')\nExpected output: 'bnn'\nActual output: 'bnana'",
    );
    const prose = await evalModel("prose", "prose", "--benchmark", "mbpp", "--rounds", "1");
    expect(prose.error).toBeUndefined();
    expect(passAt1("prose")).toEqual([0]);
    expect(lines("prose").filter((l) => l.outcome === "no-code")).toHaveLength(2);
    expect(lines("prose").find((l) => l.task_id === "601").code).toBeNull();
  });

  it("asks the feedback role for guidance: without the canonical solution (human), with it (oracle)", async () => {
    for (const kind of ["human", "oracle"]) {
      llm.reset();
      const run = await evalModel("fixer", `fixer-${kind}`, "--benchmark", "mbpp", "--feedback", kind);
      expect(run.error).toBeUndefined();
      expect(passAt1(`fixer-${kind}`)).toEqual([0, 1]);
      const asked = llm.requests.filter((r) => r.body.model === "guide");
      expect(asked).toHaveLength(2);
      const prompt = asked.map(lastUserMessage).find((p) => p.includes("strip_char('banana'"))!;
      expect(prompt).toContain("@@Existing Code \ndef strip_char(s, ch):\n    return s.replace(ch, '', 1)");
      expect(prompt).toContain(
        "@@Execution Result \nInput: strip_char('banana', 'a')\nExpected output: 'bnn'",
      );
      const canonical = "return s.replace(ch, '')\n";
      if (kind === "oracle")
        expect(prompt).toContain(`@@Canonical Solution \ndef strip_char(s, ch):\n    ${canonical.trim()}`);
      else expect(prompt).not.toContain("Canonical Solution");
      const feedback = lines(`fixer-${kind}`)
        .filter((l) => l.round === 1)
        .map((l) => l.feedback);
      expect(feedback).toEqual([GUIDANCE, GUIDANCE]);
    }
  });

  it("resumes: a rerun sends nothing, a torn last task is evaluated again from the cache, other settings are refused", async () => {
    const before = readFileSync(path.join(dir, "fixer", "results.jsonl"), "utf8");
    llm.reset();
    const again = await evalModel("fixer", "fixer", "--benchmark", "humaneval");
    expect(again.error).toBeUndefined();
    expect(llm.count).toBe(0);
    expect(again.stdout).toContain("3 kept from an earlier run");
    expect(readFileSync(path.join(dir, "fixer", "results.jsonl"), "utf8")).toBe(before);

    // a kill in the middle of the last write: its task is done again, answered by the cache
    truncateSync(path.join(dir, "fixer", "results.jsonl"), before.length - 40);
    const resumed = await evalModel("fixer", "fixer", "--benchmark", "humaneval");
    expect(resumed.error).toBeUndefined();
    expect(llm.count).toBe(0);
    expect(resumed.stdout).toContain("2 kept from an earlier run");
    const tasks = lines("fixer").map((l) => `${l.task_id}#${l.round}`);
    expect(new Set(tasks).size).toBe(tasks.length);
    expect(tasks).toHaveLength(6);
    expect(passAt1("fixer")).toEqual([0, 1]);

    const other = await evalModel("fixer", "fixer", "--benchmark", "humaneval", "--rounds", "3");
    expect(other.error?.message).toMatch(/holds another evaluation \(rounds 2 -> 3\).*--force/);
    const forced = await evalModel("fixer", "fixer", "--benchmark", "humaneval", "--rounds", "3", "--force");
    expect(forced.error).toBeUndefined();
    expect(passAt1("fixer")).toEqual([0, 1, 1]);
  });

  it("records a benchmark file that does not parse as an invalid task, and --limit takes the first tasks", async () => {
    const run = await evalModel(
      "correct",
      "broken",
      "--benchmark",
      "humaneval",
      "--set",
      "eval.model.benchmarks.humaneval.repo=broken/humaneval",
    );
    expect(run.error).toBeUndefined();
    expect(metrics("broken")).toMatchObject({ tasks: 0, invalid_tasks: 1 });
    expect(lines("broken")[0]).toMatchObject({
      outcome: "invalid-task",
      reason: expect.stringContaining("could not be read"),
    });
    const limited = await evalModel("correct", "limited", "--benchmark", "humaneval+", "--limit", "2");
    expect(limited.error).toBeUndefined();
    expect(metrics("limited").tasks).toBe(2);
  });

  it("stops with exit 3, no task failed, when the model's server or the sandbox never answers", async () => {
    const dead = `http://127.0.0.1:${await freePort()}`;
    const noModel = await evalModel(
      "unheard", // no answer of its in the cache
      "dead-llm",
      "--benchmark",
      "mbpp",
      "--base-url",
      `${dead}/v1`,
      "--set",
      "llm.weak.probe_s=0.2",
    );
    expect(noModel.error).toMatchObject({ exitCode: 3 });
    expect(noModel.error?.message).toMatch(/^llm role 'weak': no answer from /);
    const noSandbox = await evalModel(
      "correct",
      "dead-sandbox",
      "--benchmark",
      "mbpp",
      "--set",
      `sandbox.url=${dead}`,
      "--set",
      "sandbox.probe_s=0.2",
    );
    expect(noSandbox.error).toMatchObject({ exitCode: 3 });
    expect(noSandbox.error?.message).toMatch(/^no answer from the sandbox server at /);
    for (const out of ["dead-llm", "dead-sandbox"]) {
      expect(existsSync(path.join(dir, out, "metrics.json"))).toBe(false);
      expect(readFileSync(path.join(dir, out, "results.jsonl"), "utf8")).not.toMatch(/"round":[1-9]/);
    }
  });

  it.skipIf(!canMount)("stops with exit 2, no task failed, when --out is on a full disk", async () => {
    const mount = tempDir();
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=4k", "tmpfs", mount]);
    try {
      const run = await evalModel("correct", path.relative(dir, mount), "--benchmark", "humaneval");
      expect(run.error).toMatchObject({ exitCode: 2 });
      expect(run.error?.message).toContain(
        `eval model: cannot write ${mount}: no space left on the device (ENOSPC)`,
      );
    } finally {
      execFileSync("umount", [mount]);
    }
  });

  it("refuses a run time-out that is not a positive number before evaluating anything", async () => {
    for (const bad of ["0", "-1", "soon"]) {
      llm.reset();
      const run = await evalModel("correct", `timeout-${bad}`, "--benchmark", "mbpp", "--run-timeout", bad);
      expect(run.error?.message).toMatch(/--run-timeout must be a positive number of seconds/);
      expect(llm.count).toBe(0);
    }
  });
});
