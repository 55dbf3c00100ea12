// The quality gates on dialogues a stage made: simulate against the scripted model over the real
// OpenAI protocol, then validate. A model that answers a Go question in Python, and one whose answer
// the server cut at max_tokens, used to be exported unnoticed; now validate names both and drops them.
import { beforeAll, describe, expect, it } from "vitest";
import type { PipelineRecord } from "../../pipeline/record.js";
import type { SandboxUsage } from "../../pipeline/usage.js";
import { defineValidateStage } from "../../stages/validate.js";
import { filterRecord, runnerFor, scriptedWorld } from "../dialogue-kit/kit.js";
import { caseOf, partOf, scriptedReply } from "../dialogue-kit/script.js";
import type { ReceivedRequest, Reply } from "../support/llm-server.js";
import { collect } from "../support/runner-kit.js";
import { tempDir } from "../support/temp-dir.js";
import { fence } from "../validate/fixtures.js";

const ANALYSIS = "The code ran and printed the answer. The task is done.";

// the weak model's first answer per case; everything else follows the simulate tests' script
function reply(r: ReceivedRequest): Reply {
  const part = partOf(r);
  switch (caseOf(r)) {
    case "go-answered-wrong":
      if (part === "weak") return `Here you go:\n${fence("python", "print(6 * 7)")}`;
      if (part === "strong") return ANALYSIS;
      break;
    case "cut-off":
      if (part === "weak")
        return {
          content: `Step one:\n${fence("python", "print('step one')")}\nStep two is`,
          finishReason: "length",
        };
      if (part === "strong") return ANALYSIS;
      break;
    case "fine":
      if (part === "weak") return fence("python", "print(6 * 7)");
      if (part === "strong") return ANALYSIS;
      break;
  }
  return scriptedReply(r);
}

const RECORDS = [
  filterRecord("t:go", "go-answered-wrong", "go", "Write a Go program that prints the product of 6 and 7."),
  filterRecord("t:cut", "cut-off", "python", "Print the first step."),
  filterRecord("t:fine", "fine", "python", "Print the product of 6 and 7 in Python."),
];

const world = scriptedWorld(reply);
const { sandbox } = world;

describe("gates on simulated dialogues", () => {
  let kept: PipelineRecord[];
  let rejects: { reason: string; detail: string; record: PipelineRecord }[];
  let made: PipelineRecord[];
  let programs: Record<string, SandboxUsage | undefined>;

  beforeAll(async () => {
    const { runner, close } = runnerFor(tempDir("cf-gates-sim-"), () => RECORDS, {
      url: world.server.url,
      sandbox,
      stages: "  simulate:\n    feedback_rounds: 0\n    execution: {run_timeout_s: 5}\n",
      downstream: [defineValidateStage(["simulate"])],
    });
    await runner.run(["validate"]);
    await close();
    made = await collect(runner.store("simulate").read());
    kept = await collect(runner.store("validate").read());
    rejects = (await collect(runner.store("validate").read({ rejects: true }))) as never;
    programs = {
      simulate: runner.status("simulate").manifest!.sandbox,
      validate: runner.status("validate").manifest!.sandbox,
    };
  });

  it("counts the programs each stage ran in the sandbox, with the dialogue they ran for", () => {
    // simulate keeps every execution of a dialogue in it: the count is theirs
    const executions = made.reduce(
      (n, r) => n + ((r.meta as { executions: unknown[] }).executions ?? []).length,
      0,
    );
    expect(executions).toBeGreaterThan(0);
    expect(programs.simulate?.runs).toBe(executions);
    // validate ran the code blocks of every dialogue again, kept or dropped
    expect(programs.validate!.runs).toBeGreaterThanOrEqual(made.length);
    for (const stage of ["simulate", "validate"]) {
      expect(programs[stage]!.busyMs).toBeGreaterThan(0);
      // one embedded sandbox: no servers to count per
      expect(programs[stage]!.endpoints).toBeUndefined();
    }
  });

  it("simulate keeps the finish reason the server gave each answer", () => {
    const cut = made.find((r) => (r.sources as string[])[0] === "t:cut")!;
    expect((cut.meta as { finish_reasons: Record<string, string> }).finish_reasons).toEqual({
      "2": "length",
      "4": "stop",
    });
  });

  it("drops Python for a Go question and an answer cut at max_tokens, and keeps the good one", () => {
    const reasons = Object.fromEntries(rejects.map((r) => [(r.record.sources as string[])[0], r.reason]));
    expect(reasons).toEqual({ "t:go": "wrong-language", "t:cut": "truncated" });
    expect(rejects.find((r) => r.reason === "wrong-language")!.detail).toBe(
      "message 2: the query asks for go and the answer has a python block",
    );
    expect(kept.map((r) => (r.sources as string[])[0])).toEqual(["t:fine"]);
  });
});
