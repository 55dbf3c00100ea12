// The quality gates through the validate stage, on hand-written dialogues and the real embedded
// sandbox: each rule tags the dialogue that breaks it and drops it by default, leaves its well-behaved
// twin alone, only tags when left out of `gates.drop`, and is counted per method in the summary.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DialogueMessage } from "../../pipeline/dialogue.js";
import { makeDialogue } from "../../pipeline/dialogue.js";
import type { PipelineRecord } from "../../pipeline/record.js";
import { EmbeddedSandbox } from "../../pipeline/sandbox/index.js";
import type { ValidateSummary } from "../../stages/validate/summary.js";
import { defineValidateStage } from "../../stages/validate.js";
import { FORK_TO_THE_CAP, testConfig } from "../sandbox/helpers.js";
import { collect, makeRunner, noServices } from "../support/runner-kit.js";
import { tempDir } from "../support/temp-dir.js";
import { declared, dialogueSource, fence } from "./fixtures.js";

const sandbox = new EmbeddedSandbox(testConfig());
afterAll(() => sandbox.close());

const u = (content: string): DialogueMessage => ({ role: "user", content });
const a = (content: string): DialogueMessage => ({ role: "assistant", content });
const result = (text: string) => u(`Execution result: \n${text}`);

function make(
  name: string,
  messages: DialogueMessage[],
  method = "single-turn-packing",
  meta: Record<string, unknown> = {},
): PipelineRecord {
  return makeDialogue({ method: declared(method), sources: [name], lang: "python", messages, meta });
}

// A program that reads the environment, forks to the limit and tries the network, hiding every error.
const PROBE = `import os, socket, time
env = dict(os.environ)
${FORK_TO_THE_CAP}
try:
    socket.create_connection(("203.0.113.1", 80), timeout=2)
except OSError:
    pass
print("all good")`;

const DIALOGUES: PipelineRecord[] = [
  // silent-failure: a crash, then the next request as if it had worked
  make("silent", [
    u("Print the reciprocal of zero."),
    a(fence("python", "print(1 / 0)")),
    u("Now print hello."),
    a(fence("python", "print('hello')")),
  ]),
  // its twin: the crash is followed by its execution result
  make(
    "shown",
    [
      u("Print the reciprocal of zero."),
      a(fence("python", "print(1 / 0)")),
      result("ZeroDivisionError: division by zero"),
      a(`Guarded:\n${fence("python", "print(1 / 0 if False else 'inf')")}`),
    ],
    "interaction-simulation",
  ),
  make("stated", [
    u("Add two and two in Python."),
    a(`${fence("python", "print(2 + 2)")}\nOutput:\n\`\`\`\n5\n\`\`\``),
  ]),
  make("stated-right", [
    u("Add two and three in Python."),
    a(`${fence("python", "print(2 + 3)")}\nWhen run, it prints \`5\`.`),
  ]),
  make("no-code", [
    u("Write a function that reverses a string."),
    a("You can reverse a string by reading it from the end."),
  ]),
  make("wrong-language", [u("Write a Go program that prints 42."), a(fence("python", "print(42)"))]),
  make("truncated", [u("Print one."), a(fence("python", "print(1)"))], "interaction-simulation", {
    finish_reasons: { "1": "length" },
  }),
  make("long-result", [
    u("Print many numbers."),
    a(fence("python", "print(7)")),
    result("7\n".repeat(2500)),
    a("It printed the numbers."),
  ]),
  make("repeated", [
    u("Print one."),
    a(fence("python", "print(1)")),
    u("And again?"),
    a(fence("python", "print(1)")),
  ]),
  make("probe", [u("Check the machine."), a(fence("python", PROBE))], "code-correction"),
];

function runnerFor(dir: string, yaml = "") {
  const methods = ["single-turn-packing", "interaction-simulation", "code-correction"];
  return makeRunner([dialogueSource("pack", () => DIALOGUES, methods), defineValidateStage(["pack"])], {
    dir,
    yaml: `stages:\n  validate:\n    run_timeout_s: 10\n${yaml}`,
    services: { ...noServices, sandbox: () => sandbox },
  });
}

type Gate = { rule: string; message: number; detail: string };
const gatesOf = (r: PipelineRecord) => (r.meta as { validation: { gates: Gate[] } }).validation.gates;
const source = (r: PipelineRecord) => (r.sources as string[])[0]!;

describe("quality gates", () => {
  let kept: PipelineRecord[];
  let rejects: { reason: string; detail: string; record: PipelineRecord }[];
  let summary: ValidateSummary;

  beforeAll(async () => {
    const runner = runnerFor(tempDir("cf-gates-"));
    await runner.run(["validate"]);
    kept = await collect(runner.store("validate").read());
    rejects = (await collect(runner.store("validate").read({ rejects: true }))) as never;
    summary = runner.status("validate").manifest!.stats as unknown as ValidateSummary;
  });

  it("drops each dialogue that breaks a rule, named after the rule, and keeps the well-behaved ones", () => {
    expect(Object.fromEntries(rejects.map((r) => [source(r.record), r.reason]))).toEqual({
      silent: "silent-failure",
      stated: "stated-output",
      "no-code": "no-code-answer",
      "wrong-language": "wrong-language",
      truncated: "truncated",
      "long-result": "long-result",
      repeated: "repeated-turn",
      probe: "sandbox-stopped",
    });
    expect(kept.map(source).sort()).toEqual(["shown", "stated-right"]);
    for (const r of kept) expect(gatesOf(r)).toEqual([]);
  });

  it("says where and why", () => {
    const detail = (name: string) => rejects.find((r) => source(r.record) === name)!.detail;
    expect(detail("silent")).toMatch(
      /^message 1: block 0 fails \(ZeroDivisionError.*not its execution result/,
    );
    expect(detail("stated")).toBe('message 1: says it prints "5", the sandbox printed "4"');
    expect(detail("wrong-language")).toMatch(/asks for go and the answer has a python block/);
    expect(detail("truncated")).toMatch(/cut by max_tokens/);
    expect(detail("long-result")).toMatch(/^message 2: an execution result of \d+ characters/);
    expect(detail("repeated")).toBe("message 3: the same answer as message 1");
    // the probe exits 0 and prints "all good": only the sandbox's own count of refused forks tells
    expect(detail("probe")).toMatch(/refused a process past its process limit/);
    const probe = rejects.find((r) => source(r.record) === "probe")!.record;
    const blocks = (probe.meta as { validation: { outcome: string; blocks: { stopped?: string }[] } })
      .validation;
    expect(blocks.outcome).toBe("passed");
    expect(blocks.blocks[0]!.stopped).toBe("processes");
  });

  it("counts each rule per method in the summary, and the drops by rule", () => {
    expect(summary.gates).toEqual({
      "silent-failure": { "single-turn-packing": 1 },
      "stated-output": { "single-turn-packing": 1 },
      "no-code-answer": { "single-turn-packing": 1 },
      "wrong-language": { "single-turn-packing": 1 },
      truncated: { "interaction-simulation": 1 },
      "long-result": { "single-turn-packing": 1 },
      "repeated-turn": { "single-turn-packing": 1 },
      "sandbox-stopped": { "code-correction": 1 },
    });
    expect(summary.dropped_by).toMatchObject({ "silent-failure": 1, "sandbox-stopped": 1 });
    // in name order, not in the order the workers happened to finish: the report and log read them so
    for (const map of [summary.gates, summary.dropped_by, summary.blocks_by_language, summary.by_method])
      expect(Object.keys(map)).toEqual(Object.keys(map).sort());
  });

  it("only tags the rules left out of gates.drop", async () => {
    const runner = runnerFor(
      tempDir("cf-gates-tag-"),
      "    gates: {drop: [silent-failure], max_result_chars: 100000}\n",
    );
    await runner.run(["validate"]);
    const out = await collect(runner.store("validate").read());
    const dropped = await collect(runner.store("validate").read({ rejects: true }));
    expect(dropped.map((r) => r.reason)).toEqual(["silent-failure"]);
    const stated = out.find((r) => source(r) === "stated")!;
    expect(gatesOf(stated).map((g) => g.rule)).toEqual(["stated-output"]);
    expect(gatesOf(out.find((r) => source(r) === "long-result")!)).toEqual([]);
  });
});
