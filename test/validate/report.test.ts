// Validate's part of the report: every method's dialogues as its stage made them (each dialogue
// stage's declared `made`) and as validation kept them, and the quality gates per method.
import { expect, it } from "vitest";
import { collectReport, renderReport } from "../../pipeline/report/index.js";
import { validateStage } from "../../stages/index.js";
import { methodsOf } from "../../stages/validate/report-methods.js";
import { dataDirPerTest, FULL_RUN, REGISTRY, stageView, writeManifests } from "../report/fixtures.js";

const dir = dataDirPerTest("cf-validate-report-");
const validateView = () => stageView(dir.path, validateStage, "methods");

it("sets each method's dialogues as made and as kept beside the paper's", async () => {
  await writeManifests(dir.path, FULL_RUN);
  const { methods } = methodsOf(validateView());
  expect(methods.find((m) => m.method === "single-turn-packing")).toMatchObject({
    stage: "pack",
    generated: { dialogues: 160, turns: 402 },
    kept: { dialogues: 146, turns: 366 },
    paper: { dialogues: 16_600, turnsPerDialogue: 2 },
  });
});

it("counts each quality gate per method, as validate's summary gives it, in a row per rule", async () => {
  await writeManifests(dir.path, FULL_RUN);
  const view = validateView();
  expect(view.summary!.gates).toEqual({
    "silent-failure": { "single-turn-packing": 3 },
    "wrong-language": { "interaction-simulation": 2, "single-turn-packing": 1 },
  });
  const html = renderReport(collectReport(dir.path, { registry: REGISTRY }));
  const section = html.slice(html.indexOf("Quality gates"));
  expect(section).toMatch(/<th[^>]*>interaction-simulation<\/th><th[^>]*>single-turn-packing<\/th>/);
  expect(section).toMatch(/<td[^>]*>wrong-language<\/td><td[^>]*>2<\/td><td[^>]*>1<\/td>/);
});

it("counts 0 for a method whose stage ran and made none of it, and names the stage of one that has not run", async () => {
  const pack = FULL_RUN.find((m) => m.stage === "pack")!;
  // leetcode ran and made similar problems only; correct has not run
  const leetcode = {
    ...pack,
    stage: "leetcode",
    counts: { in: 12, out: 3, rejected: 0, failed: 0 },
    stats: {
      "leetcode-similar-problem": {
        dialogues: 3,
        turns: 6,
        turns_per_dialogue: 2,
        by_lang: {},
        paper: { dialogues: 303, turns_per_dialogue: 2.2 },
      },
    },
  };
  await writeManifests(dir.path, [
    ...FULL_RUN.filter((m) => m.stage !== "validate" && m.stage !== "export"),
    leetcode,
  ]);
  const { methods } = methodsOf(validateView());
  const row = (method: string) => methods.find((m) => m.method === method)!;
  expect(row("leetcode-similar-problem")).toMatchObject({
    stage: "leetcode",
    generated: { dialogues: 3, turns: 6 },
  });
  expect(row("leetcode-follow-up")).toMatchObject({
    stage: "leetcode",
    generated: { dialogues: 0, turns: 0 },
  });
  expect(row("code-correction")).toMatchObject({ stage: "correct" });
  expect(row("code-correction").generated).toBeUndefined();
  const html = renderReport(collectReport(dir.path, { registry: REGISTRY }));
  expect(html).toContain('<td>leetcode-follow-up</td><td class="num">0</td>');
  expect(html).toContain('<td>code-correction</td><td class="num">correct not run</td>');
});
