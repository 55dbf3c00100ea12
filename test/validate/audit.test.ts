// Auditing a dialogue dataset: rows in Code-Feedback's shape, a chat shape or this pipeline's own
// export become dialogues of a method named after their source, and bad rows become rejects with
// their reason; then a whole run from local files through export, with the paper's stages in place
// and those that make dialogues switched off: the failing dialogue is dropped with its reason, the
// others released under their own ids, and the card and the report give the source's verdict.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Dialogue, DialogueMethod } from "../../pipeline/dialogue.js";
import { ConfigError } from "../../pipeline/errors.js";
import type { RawRow } from "../../pipeline/readers/index.js";
import type { Reject } from "../../pipeline/record.js";
import { StageRegistry } from "../../pipeline/registry.js";
import { collectReport, renderReport } from "../../pipeline/report/index.js";
import { EmbeddedSandbox } from "../../pipeline/sandbox/index.js";
import { type AuditConfig, auditConfigSchema, auditRow } from "../../stages/audit.js";
import type { ExportSummary } from "../../stages/export/stats.js";
import { STAGES } from "../../stages/index.js";
import { testConfig } from "../sandbox/helpers.js";
import { collect, makeRunner, noServices } from "../support/runner-kit.js";
import { tempDir } from "../support/temp-dir.js";
import { fence } from "./fixtures.js";

const METHOD: DialogueMethod = { name: "mine", prefix: "mine", card: "mine", audited: { where: "in.jsonl" } };
const DEFAULTS: AuditConfig = auditConfigSchema.parse({});

function audit(value: unknown, config: Partial<AuditConfig> = {}) {
  const row: RawRow = { index: 7, value };
  return auditRow({ id: "mine:000007", source: "mine", file: "in.jsonl", row }, METHOD, {
    ...DEFAULTS,
    ...config,
  });
}
const madeOf = (outcome: ReturnType<typeof audit>) => (outcome.out?.[0] ?? {}) as unknown as Dialogue;
const rejectOf = (outcome: ReturnType<typeof audit>) => outcome.rejects?.[0] as Reject;

const ASK = "Print the sum of 2 and 3 in Python.";
const ANSWER = fence("python", "print(2 + 3)");

describe("a row of a dialogue dataset", () => {
  it("in Code-Feedback's shape is a dialogue of its source's method under its own id", () => {
    const d = madeOf(
      audit({
        id: 42,
        messages: [
          { role: "user", content: ASK },
          { role: "assistant", content: ANSWER },
        ],
      }),
    );
    expect(d).toMatchObject({ id: "mine:42", method: "mine", sources: ["mine:42"], lang: "python" });
    expect(d.messages).toEqual([
      { role: "user", content: ASK },
      { role: "assistant", content: ANSWER },
    ]);
    expect(d.meta).toEqual({ origin: { where: "in.jsonl", file: "in.jsonl", row: 7 } });
  });

  it("in ShareGPT's shape (conversations, from/value, human/gpt) reads the same, and takes its row number without an id", () => {
    const d = madeOf(
      audit({
        conversations: [
          { from: "human", value: ASK },
          { from: "gpt", value: ANSWER },
        ],
      }),
    );
    expect(d.id).toBe("mine:000007");
    expect(d.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
  });

  it("from this pipeline's full export keeps its dialogue id, language and system prompt", () => {
    const d = madeOf(
      audit({
        id: 123456789,
        dialogue_id: "sim-0123456789abcdef",
        lang: "python",
        system: "You are a code interpreter.",
        messages: [
          { role: "user", content: ASK },
          { role: "assistant", content: "It prints 5." },
        ],
      }),
    );
    expect(d.id).toBe("mine:sim-0123456789abcdef");
    expect(d.lang).toBe("python");
    expect(d.messages[0]).toEqual({ role: "system", content: "You are a code interpreter." });
  });

  it.each([
    ["a list", [1, 2], "not-an-object"],
    ["no turns", { text: "hello" }, "no-turns"],
    ["a turn without a role", { messages: [{ content: ASK }] }, "turn-without-role"],
    ["a turn without content", { messages: [{ role: "user" }] }, "turn-without-content"],
    ["a content that is no string", { messages: [{ role: "user", content: 5 }] }, "non-string-content"],
    ["an unknown role", { messages: [{ role: "robot", content: ASK }] }, "unknown-role"],
    [
      "turns that do not alternate",
      {
        messages: [
          { role: "user", content: ASK },
          { role: "user", content: ASK },
        ],
      },
      "malformed-dialogue",
    ],
  ])("with %s is rejected with its reason", (_what, value, reason) => {
    const outcome = audit(value);
    expect(outcome.out).toBeUndefined();
    expect(rejectOf(outcome)).toMatchObject({ id: "mine:000007", reason });
    expect(rejectOf(outcome).detail).toContain("row 7");
  });

  it("with 100,000 turns is rejected for its length, its turns never read", () => {
    const messages = Array.from({ length: 100_000 }, (_, i) => ({
      role: i % 2 ? "assistant" : "user",
      content: "x",
    }));
    expect(rejectOf(audit({ messages }))).toMatchObject({
      reason: "too-many-turns",
      detail: "in.jsonl, row 7 has 100000 turns, over stages.audit.max_turns (1000)",
    });
  });

  it("with no code at all is kept by default (validate says no-code), dropped with keep_no_code off", () => {
    const talk = {
      messages: [
        { role: "user", content: "What is a closure?" },
        { role: "assistant", content: "A function with the variables it captured." },
      ],
    };
    expect(madeOf(audit(talk)).lang).toBe("unknown");
    expect(rejectOf(audit(talk, { keep_no_code: false }))).toMatchObject({ reason: "no-code" });
  });

  it("that the reader could not parse is rejected with the reader's reason", () => {
    const row: RawRow = {
      index: 3,
      error: { reason: "row-too-large", detail: "row 3 is over 8 MB", prefix: "{" },
    };
    const outcome = auditRow({ id: "mine:000003", source: "mine", file: "in.jsonl", row }, METHOD, DEFAULTS);
    expect(rejectOf(outcome)).toMatchObject({
      reason: "row-too-large",
      detail: "in.jsonl: row 3 is over 8 MB",
    });
  });
});

const sandbox = new EmbeddedSandbox(testConfig());
afterAll(() => sandbox.close());

describe("a dialogue audit through export", () => {
  const dir = tempDir("cf-audit-");
  const input = join(dir, "in");
  const py = (code: string) => fence("python", code);
  const user = (content: string) => ({ role: "user", content });
  const assistant = (content: string) => ({ role: "assistant", content });
  const rows = [
    { id: 1, messages: [user("Print hello in Python."), assistant(py("print('hello')"))] },
    {
      id: 2,
      messages: [
        user("Divide ten by a number in Python."),
        assistant(py("print(10 / 2)")),
        user("Now by zero."),
        assistant(py("print(10 / 0)")),
      ],
    },
    { id: 3, messages: [user("What does a linker do?"), assistant("It joins object files into a program.")] },
    { id: 4, messages: [{ content: "a turn without a role" }] },
    {
      id: 5,
      messages: Array.from({ length: 100_000 }, (_, i) => (i % 2 ? assistant("ok") : user("go on"))),
    },
  ];
  const chat = [
    {
      conversations: [
        { from: "human", value: "Log a greeting in JavaScript." },
        { from: "gpt", value: fence("javascript", "console.log('hi')") },
      ],
    },
  ];
  const yaml = (extra = "") =>
    [
      "stages:",
      "  download:",
      `    sources: [{name: mine, adapter: dialogues, path: ${JSON.stringify(join(input, "*"))}}]`,
      ...["pack", "simulate", "correct", "leetcode"].map((s) => `  ${s}: {enabled: false}`),
      "  dedup: {decontaminate: false}",
      "  validate: {run_timeout_s: 30}",
      extra,
    ].join("\n");
  const runner = (extra?: string) =>
    makeRunner(STAGES, { dir, yaml: yaml(extra), services: { ...noServices, sandbox: () => sandbox } });
  const exported = (name: string) => readFileSync(join(dir, "data", "export", name), "utf8");
  const verdict = (r: ReturnType<typeof runner>) =>
    (r.status("export").manifest!.stats as unknown as ExportSummary).audits!;

  beforeAll(async () => {
    mkdirSync(input);
    writeFileSync(join(input, "a.jsonl"), rows.map((r) => `${JSON.stringify(r)}\n`).join(""));
    writeFileSync(join(input, "b.json"), JSON.stringify(chat));
    await runner().run(["export"]);
  });

  it("declares one method named after the source, which validate and export take", () => {
    const registry = runner().registry;
    expect(registry.methodsOf("audit")).toEqual([
      {
        name: "mine",
        prefix: "mine",
        card: `the dialogues of ${join(input, "*")}, taken as found and audited`,
        audited: { where: join(input, "*") },
      },
    ]);
    // a registry built without the config knows the stage, not its methods
    expect(new StageRegistry(STAGES).methodsOf("audit")).toEqual([]);
  });

  it("drops the dialogue whose final code fails with its reason, and releases the others under their own ids", async () => {
    const dropped = await collect(runner().store("validate").read({ rejects: true }));
    expect(dropped.map((r) => [r.id, r.reason])).toEqual([["mine:2", "final-code-failed"]]);
    expect(dropped[0]!.detail).toContain("ZeroDivisionError");
    const full = exported("code-feedback-full.jsonl")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { dialogue_id: string; method: string; lang: string; validation: string });
    expect(full.map((r) => [r.dialogue_id, r.method, r.lang, r.validation]).sort()).toEqual([
      ["mine:000005", "mine", "javascript", "passed"],
      ["mine:1", "mine", "python", "passed"],
      ["mine:3", "mine", "unknown", "no-code"],
    ]);
    const rejected = await collect(runner().store("audit").read({ rejects: true }));
    expect(rejected.map((r) => [r.id, r.reason])).toEqual([
      ["mine:000003", "turn-without-role"],
      ["mine:000004", "too-many-turns"],
    ]);
  });

  it("gives the source's verdict in export's summary, the card and the report", () => {
    const r = runner();
    expect(verdict(r)).toEqual([
      {
        method: "mine",
        where: join(input, "*"),
        read: 6,
        released: 3,
        released_by: { passed: 2, "no-code": 1 },
        dropped: 3,
        pass_rate: 0.5,
        dropped_by: { "final-code-failed": 1, "turn-without-role": 1, "too-many-turns": 1 },
        by_lang: {
          python: { released: 1, dropped: 1 },
          unknown: { released: 1, dropped: 2 },
          javascript: { released: 1, dropped: 0 },
        },
      },
    ]);
    const card = exported("README.md");
    expect(card).toContain("## Audited datasets");
    expect(card).toContain(
      `| mine | \`${join(input, "*")}\` | 6 | 3 | 50.0% | final-code-failed 1, too-many-turns 1, turn-without-role 1 |`,
    );
    expect(card).toContain("| mine | python | 1 | 1 |");
    const html = renderReport(collectReport(join(dir, "data"), { registry: r.registry as never }));
    const section = /<section id="audits">[\s\S]*?<\/section>/.exec(html)?.[0] ?? "";
    expect(section).toContain("<td>mine</td>");
    expect(section).toContain("50.0%");
    expect(section).toContain("final-code-failed 1, too-many-turns 1, turn-without-role 1");
  });

  it("refuses, as a configuration error, a source whose method clashes with another's", () => {
    const clashing = (name: string) =>
      makeRunner(STAGES, {
        dir,
        yaml: `stages:\n  download:\n    sources: [{name: ${name}, adapter: dialogues, path: ${JSON.stringify(input)}}]\n`,
      });
    // pack's id prefix, then a paper method's name
    expect(() => clashing("pack")).toThrow(ConfigError);
    expect(() => clashing("pack")).toThrow(
      "dialogue methods single-turn-packing and pack both declare the id prefix pack; each needs its own: rename the audited source (its `name`; `pnpm pipeline audit --name` for an audit's)",
    );
    expect(() => clashing("code-correction")).toThrow(
      /stages correct and audit both declare the dialogue method code-correction/,
    );
  });

  it("drops the dialogue with no code when keep_no_code is off, saying no-code", async () => {
    const r = runner("  audit: {keep_no_code: false}");
    await r.run(["export"]);
    expect(verdict(r)[0]).toMatchObject({ released: 2, dropped_by: { "no-code": 1 } });
    expect(exported("code-feedback-full.jsonl")).not.toContain('"mine:3"');
  });
});
