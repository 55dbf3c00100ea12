// A sixth dialogue method, declared here in test/ with its stage and config alone: validate checks its
// dialogues, export releases them, the card names it among the ways dialogues are made, and the
// report gives it its row, with no edit under pipeline/ or in another stage. It is not in the paper,
// so it has no paper figures and stays out of the verdict on the paper's shape.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type DialogueMethod,
  DialogueTally,
  makeDialogue,
  methodTallyKeys,
} from "../../pipeline/dialogue.js";
import type { PipelineRecord } from "../../pipeline/record.js";
import { StageRegistry } from "../../pipeline/registry.js";
import { outputsStep } from "../../pipeline/report/flow.js";
import { collectReport, renderReport } from "../../pipeline/report/index.js";
import { EmbeddedSandbox } from "../../pipeline/sandbox/index.js";
import { defineStage, type Stage } from "../../pipeline/stage.js";
import { auditStage } from "../../stages/audit.js";
import type { ExportSummary } from "../../stages/export/stats.js";
import { exportStage } from "../../stages/export.js";
import type { ValidateSummary } from "../../stages/validate/summary.js";
import { defineValidateStage } from "../../stages/validate.js";
import { testConfig } from "../sandbox/helpers.js";
import { collect, makeRunner, noServices } from "../support/runner-kit.js";
import { tempDir } from "../support/temp-dir.js";
import { dialogue, dialogueSource, fence, turns } from "../validate/fixtures.js";

const CODE_REVIEW = {
  name: "code-review",
  prefix: "review",
  card: "code review (a reviewer asks for a test of each answer, and gets one that runs)",
} as const satisfies DialogueMethod;

/** The toy method's stage: each filtered pair, and a review turn asking for a test of the answer. */
const reviewStage = defineStage({
  name: "review",
  description: "asks for a test of each answer (a toy method)",
  methods: [CODE_REVIEW],
  upstream: ["filter"],
  switchable: true,
  kind: "record",
  configSchema: z.object({ ask: z.string().default("Now test it.") }).strict(),
  input: (ctx) => ctx.read("filter"),
  process: async (record, ctx) => ({
    out: [
      makeDialogue({
        method: CODE_REVIEW,
        sources: [record.id],
        lang: "python",
        messages: turns(
          [record.query as string, record.answer as string],
          [ctx.config.ask, fence("python", "assert 2 * 2 == 4\nprint('ok')")],
        ),
      }),
    ],
  }),
  summarize: async (ctx) => (await DialogueTally.of([CODE_REVIEW], ctx.read(ctx.name))).result(),
  summarySchema: z.object(methodTallyKeys([CODE_REVIEW])),
  report: { flow: outputsStep("review dialogues") },
});

const PAIRS: PipelineRecord[] = [
  {
    id: "magicoder:000001",
    query: "Double a number.",
    answer: "`x * 2`",
    resource: "magicoder",
    lang: "python",
  },
  {
    id: "magicoder:000002",
    query: "Square a number.",
    answer: "`x * x`",
    resource: "magicoder",
    lang: "python",
  },
];

function source(name: string, records: readonly PipelineRecord[]): Stage<unknown> {
  return defineStage({
    name,
    description: `test ${name}`,
    upstream: [],
    kind: "global",
    configSchema: z.object({}).strict(),
    async run(_ctx, emit) {
      for (const r of records) await emit.out(r);
    },
  }) as Stage<unknown>;
}

const packed = () => [
  dialogue("single-turn-packing", ["magicoder:000001", "magicoder:000002"], "python", [
    ...turns(["Print one.", fence("python", "print(1)")], ["Print two.", fence("python", "print(2)")]),
  ]),
];

const STAGES = [
  source("download", [
    {
      id: "magicoder/data.jsonl",
      source: "magicoder",
      repo: "ise-uiuc/Magicoder-OSS-Instruct-75K",
      revision: "main",
      commit: "1".repeat(40),
    },
  ]),
  source("filter", PAIRS),
  // the paper's five methods, as stand-ins declare them
  dialogueSource("pack", packed, ["single-turn-packing", "interaction-simulation", "code-correction"]),
  dialogueSource("leetcode", () => [], ["leetcode-similar-problem", "leetcode-follow-up"]),
  reviewStage as Stage<unknown>,
  // the audit of dialogue datasets, which this config names none of
  auditStage,
  defineValidateStage(["pack", "leetcode", "review", "audit"]),
  exportStage,
] as Stage<unknown>[];

const sandbox = new EmbeddedSandbox(testConfig());
afterAll(() => sandbox.close());

describe("a dialogue method declared outside pipeline/ and the paper's stages", () => {
  const dir = tempDir("cf-toy-method-");
  const runner = makeRunner(STAGES, {
    dir,
    yaml: "stages:\n  review: {ask: 'Write a test for it.'}\n  validate: {run_timeout_s: 30}\n",
    services: { ...noServices, sandbox: () => sandbox },
  });
  const exported = (name: string) => readFileSync(join(dir, "data", "export", name), "utf8");

  // a busy machine may queue the sandbox runs: room to finish, whatever the load
  beforeAll(async () => {
    await runner.run(["export"]);
  });

  it("is validated in the sandbox and counted per method", async () => {
    const kept = await collect(runner.store("validate").read());
    const reviews = kept.filter((d) => d.method === "code-review");
    expect(reviews).toHaveLength(2);
    for (const d of reviews) {
      expect(d.id).toMatch(/^review-[0-9a-f]{16}$/);
      expect((d.messages as { content: string }[])[2]!.content).toBe("Write a test for it.");
      expect((d.meta as { validation: { outcome: string } }).validation.outcome).toBe("passed");
    }
    const summary = runner.status("validate").manifest!.stats as unknown as ValidateSummary;
    expect(summary.by_method["code-review"]?.python).toMatchObject({ passed: 2, kept: 2 });
    // no paper figures for a method the paper does not have
    expect(summary.kept["code-review"]).toEqual({
      dialogues: 2,
      turns: 4,
      turns_per_dialogue: 2,
      by_lang: { python: 2 },
    });
  });

  it("is released, and the card names it with the paper's five", () => {
    const full = exported("code-feedback-full.jsonl")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { method: string });
    expect(full.filter((r) => r.method === "code-review")).toHaveLength(2);
    const stats = runner.status("export").manifest!.stats as unknown as ExportSummary;
    expect(stats.code_feedback.by_method["code-review"]).toMatchObject({ dialogues: 2 });
    expect(stats.shape.methods.at(-1)).toEqual({
      method: "code-review",
      state: "ran",
      dialogues: 2,
      turns_per_dialogue: 2,
      deviation: 0,
      deviates: false,
    });
    // the paper's methods alone decide the verdict
    expect(stats.shape.verdict).not.toContain("code-review");

    const card = exported("README.md");
    expect(card).toContain(
      [
        "3. Multi-turn dialogues are made six ways: single-turn packing (similar queries joined by sentence",
        "   embeddings and nearest neighbours), interaction simulation (a weaker model answers, its code runs,",
        "   a stronger model simulates the user's feedback and the fixes), code correction (faulty answers",
        "   corrected from their execution errors), LeetCode similar problems and follow-ups, and code review",
        "   (a reviewer asks for a test of each answer, and gets one that runs).",
      ].join("\n"),
    );
    expect(card).toContain(
      "Dialogue methods run: single-turn-packing, interaction-simulation, code-correction, leetcode-similar-problem, leetcode-follow-up, code-review.",
    );
    expect(card).toContain("| code-review | 2 | 2 |  |  |  |");
    expect(card).toContain("| code-review | python | 2 |");
  });

  it("has its row in the report's methods section and its step in the flow chart", () => {
    const data = collectReport(join(dir, "data"), { registry: new StageRegistry(STAGES) });
    expect(data.flow).toContainEqual({ label: "review dialogues", stage: "review", records: 2 });
    const html = renderReport(data);
    const methods = /<section id="methods">[\s\S]*?<\/section>/.exec(html)?.[0] ?? "";
    expect(methods).toMatch(/data-methods-run="[^"]* code-review"/);
    // made 2, kept 2, 2 turns per dialogue, no paper figures
    expect(methods).toContain(
      '<tr><td>code-review</td><td class="num">2</td><td class="num">2</td><td class="num">2.00</td><td class="num"></td><td class="num"></td><td class="num"></td></tr>',
    );
    expect(methods).toMatch(/data-category="code-review"/);
  });
});
