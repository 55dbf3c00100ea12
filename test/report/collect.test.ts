// What the report reads from the manifests: the runner's judgement over a manifest's own state, a
// stage's figures passed in before its manifest says so, and summaries of an unexpected shape.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { collectReport } from "../../pipeline/report/index.js";
import { renderReport } from "../../pipeline/report/render.js";
import { FULL_RUN, REGISTRY, writeManifests } from "./fixtures.js";

let dataDir: string;

beforeEach(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), "cf-collect-"));
});

afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

it("takes the runner's view of a stage over its manifest, and a finishing stage's own figures", async () => {
  await writeManifests(dataDir, FULL_RUN.slice(0, 7));
  const exportStats = FULL_RUN.find((m) => m.stage === "export")!.stats!;
  const data = collectReport(dataDir, {
    registry: REGISTRY,
    states: { filter: { state: "stale", reason: "its configuration changed" } },
    pending: { export: { counts: { in: 2102, out: 5, rejected: 0, failed: 0 }, stats: exportStats } },
  });
  const state = (name: string) => data.stages.find((s) => s.name === name);
  expect(state("filter")).toMatchObject({ state: "stale", reason: "its configuration changed" });
  expect(state("export")).toMatchObject({ state: "complete", counts: { out: 5 } });
  expect(data.flow.at(-1)).toEqual({ label: "exported dialogues", stage: "export", records: 590 });
  expect(data.exportFiles.map((f) => f.name)).toContain("code-feedback.parquet");
});

it("infers each round's passing score from its histogram, and folds other languages together", async () => {
  await writeManifests(dataDir, FULL_RUN);
  const data = collectReport(dataDir, { registry: REGISTRY });
  expect(data.funnel?.rounds.map((r) => r.threshold)).toEqual([4, 4]);
  expect(data.languages?.other).toEqual({ rust: 60, go: 41, unknown: 20 });
  expect(data.languages?.rows.reduce((a, r) => a + r.percent, 0)).toBeCloseTo(100, 9);
  expect(data.methods.find((m) => m.method === "single-turn-packing")).toMatchObject({
    generated: { dialogues: 160, turns: 402 },
    kept: { dialogues: 146, turns: 366 },
    paper: { dialogues: 16_600, turnsPerDialogue: 2 },
  });
});

it("counts each quality gate per method, as validate's summary gives it, in a row per rule", async () => {
  await writeManifests(dataDir, FULL_RUN);
  const data = collectReport(dataDir, { registry: REGISTRY });
  expect(data.validation?.gates).toEqual({
    "silent-failure": { "single-turn-packing": 3 },
    "wrong-language": { "interaction-simulation": 2, "single-turn-packing": 1 },
  });
  const html = renderReport(data);
  const section = html.slice(html.indexOf("Quality gates"));
  expect(section).toMatch(/<th[^>]*>interaction-simulation<\/th><th[^>]*>single-turn-packing<\/th>/);
  expect(section).toMatch(/<td[^>]*>wrong-language<\/td><td[^>]*>2<\/td><td[^>]*>1<\/td>/);
});

it("leaves a section empty, not the report broken, when a summary has another shape", async () => {
  const odd = FULL_RUN.map((m) => ({
    ...m,
    stats: { rounds: "two", by_lang: [1, 2], dialogues: 3, kept: null },
  }));
  await writeManifests(dataDir, odd as never);
  const data = collectReport(dataDir, { registry: REGISTRY });
  expect(data.funnel).toBeUndefined();
  expect(data.languages).toBeUndefined();
  expect(data.validation).toBeUndefined();
  const html = renderReport(data);
  expect(html).toMatch(/data-missing="languages"/);
  expect(html).toMatch(/data-chart="flow"/);
});

it("counts 0 for a method whose stage ran and made none of it, and names the stage of one that has not run", async () => {
  const pack = FULL_RUN.find((m) => m.stage === "pack")!;
  // leetcode ran and made similar problems only; correct has not run
  const leetcode = {
    ...pack,
    stage: "leetcode",
    counts: { in: 12, out: 3, rejected: 0, failed: 0 },
    stats: { "leetcode-similar-problem": { dialogues: 3, turns: 6, turns_per_dialogue: 2, by_lang: {} } },
  };
  await writeManifests(dataDir, [
    ...FULL_RUN.filter((m) => m.stage !== "validate" && m.stage !== "export"),
    leetcode,
  ]);
  const data = collectReport(dataDir, { registry: REGISTRY });
  const row = (method: string) => data.methods.find((m) => m.method === method)!;
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
  const html = renderReport(data);
  expect(html).toContain('<td>leetcode-follow-up</td><td class="num">0</td>');
  expect(html).toContain('<td>code-correction</td><td class="num">correct not run</td>');
});
