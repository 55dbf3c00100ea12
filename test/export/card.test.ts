// The dataset card and the shape verdict on their own: a dialogue stage switched off
// (`stages.<stage>.enabled: false`) reads "not run (disabled)", never 0 or a missing row, and the
// verdict says whether every method has the paper's turns per dialogue.
import { describe, expect, it } from "vitest";
import { type DialogueMethod, DialogueTally, paperShape } from "../../pipeline/dialogue.js";
import { StageRegistry } from "../../pipeline/registry.js";
import { datasetCard } from "../../stages/export/card.js";
import { exportConfigSchema } from "../../stages/export/config.js";
import { STAGES } from "../../stages/index.js";
import { declared, PAPER_METHODS } from "../validate/fixtures.js";

const pair = [
  { role: "user" as const, content: "q" },
  { role: "assistant" as const, content: "a" },
];
const dialogueOf = (n: number) => Array.from({ length: n }, () => pair).flat();

function tallyOf(rows: [string, number, number][]): ReturnType<DialogueTally["result"]> {
  const tally = new DialogueTally(PAPER_METHODS);
  for (const [method, dialogues, turnsEach] of rows)
    for (let i = 0; i < dialogues; i++)
      tally.add({ method: method as never, messages: dialogueOf(turnsEach), lang: "python" });
  return tally.result();
}

const registry = new StageRegistry(STAGES);

const facts = { declared: PAPER_METHODS, parquet: true, full: true };

function summary(methods: ReturnType<DialogueTally["result"]>, disabled: DialogueMethod[]) {
  return {
    code_feedback: { dialogues: 10, by_method: methods, validation: {}, keep_system: false },
    shape: paperShape(methods, PAPER_METHODS, disabled),
    dialogue_stages: {},
    filtered_instruction: { rows: 10, by_lang: { python: 10 }, by_source: {}, languages: [] },
    sources: [],
    models: {},
  };
}

describe("the per-method shape beside the paper", () => {
  it("reproduces when every method is within 20% of the paper's turns per dialogue", () => {
    const methods = tallyOf([
      ["single-turn-packing", 5, 2],
      ["interaction-simulation", 3, 3],
      ["code-correction", 2, 2], // 2.0 against 2.4: -17%
      ["leetcode-similar-problem", 1, 2],
      ["leetcode-follow-up", 1, 4],
    ]);
    const shape = paperShape(methods, PAPER_METHODS);
    expect(shape.reproduces).toBe(true);
    expect(shape.verdict).toMatch(/^reproduces the released dataset's per-method shape/);
    expect(shape.methods.find((m) => m.method === "code-correction")).toMatchObject({
      deviation: -0.17,
      deviates: false,
    });
  });

  it("marks a deviation over 20% and a disabled stage, and the card says both", () => {
    const methods = tallyOf([
      ["single-turn-packing", 4, 3], // 3.0 against 2.0: +50%
      ["interaction-simulation", 3, 3],
      ["code-correction", 2, 2],
    ]);
    const off = registry.disabledDialogueStages({ leetcode: { enabled: false }, pack: { enabled: true } });
    expect(off).toEqual(["leetcode"]);
    const disabled = registry.methodsOfStages(off);
    const shape = paperShape(methods, PAPER_METHODS, disabled);
    expect(shape.reproduces).toBe(false);
    expect(shape.verdict).toContain("single-turn-packing has 3 turns per dialogue (paper: 2, +50%)");
    expect(shape.verdict).toContain("leetcode-follow-up not run (disabled)");
    const card = datasetCard(exportConfigSchema.parse({}).card, summary(methods, disabled), facts);
    expect(card).toContain(
      "Dialogue methods run: single-turn-packing, interaction-simulation, code-correction; not run (disabled): leetcode-similar-problem, leetcode-follow-up.",
    );
    expect(card).toMatch(/\| single-turn-packing \| 4 \| 3 \| 16,600 \| 2 \| \*\*\+50%, over 20%\*\* \|/);
    expect(card).toMatch(/\| leetcode-similar-problem \| not run \(disabled\) \| \| 303 \| 2\.2 \| \|/);
    expect(card).toMatch(/\| leetcode-follow-up \| not run \(disabled\) \| \| 200 \| 3\.8 \| \|/);
    expect(card).toContain("This run does not reproduce the released dataset's per-method shape");
  });

  it("names the ways dialogues are made from the declared methods, the paper's five in the card's words", () => {
    const card = datasetCard(exportConfigSchema.parse({}).card, summary(tallyOf([]), []), facts);
    expect(card).toContain(
      [
        "3. Multi-turn dialogues are made five ways: single-turn packing (similar queries joined by sentence",
        "   embeddings and nearest neighbours), interaction simulation (a weaker model answers, its code runs,",
        "   a stronger model simulates the user's feedback and the fixes), code correction (faulty answers",
        "   corrected from their execution errors), and LeetCode similar problems and follow-ups.",
        "4. Validation:",
      ].join("\n"),
    );
  });

  it("a stage that ran and kept nothing is not called disabled", () => {
    const shape = paperShape(tallyOf([["single-turn-packing", 1, 2]]), PAPER_METHODS);
    expect(shape.methods.find((m) => m.method === "code-correction")?.state).toBe("none");
    expect(shape.verdict).toContain("code-correction made no dialogue");
  });
});

describe("the rows of both Code-Feedback configs", () => {
  it("drop the system message from the public one, keep it and validate's tags in the full one", async () => {
    const { makeDialogue } = await import("../../pipeline/dialogue.js");
    const { dialogueRows } = await import("../../stages/export/rows.js");
    const { preferredId } = await import("../../stages/export/ids.js");
    const d = makeDialogue({
      method: declared("code-correction"),
      sources: ["magicoder:000001"],
      lang: "python",
      messages: [{ role: "system", content: "Be an interpreter." }, ...pair],
      meta: {
        validation: {
          outcome: "passed",
          gates: [
            { rule: "long-result", message: "m", detail: "d" },
            { rule: "repeated-turn", message: "m" },
          ],
        },
      },
    });
    const rows = dialogueRows([d], false);
    expect(rows.public).toEqual([{ id: preferredId(d.id), messages: pair }]);
    expect(rows.full[0]).toMatchObject({
      id: preferredId(d.id),
      dialogue_id: d.id,
      system: "Be an interpreter.",
      validation: "passed",
      validation_tags: ["long-result", "repeated-turn"],
    });
    expect(dialogueRows([d], true).public[0]!.messages[0]).toEqual({
      role: "system",
      content: "Be an interpreter.",
    });
  });

  it("give every dialogue a distinct integer, the same whatever else is in the set", async () => {
    const { releaseIds, preferredId } = await import("../../stages/export/ids.js");
    const ids = releaseIds(["sim-b", "pack-a", "corr-c"]);
    expect(ids.get("pack-a")).toBe(preferredId("pack-a"));
    expect(releaseIds(["pack-a"]).get("pack-a")).toBe(ids.get("pack-a"));
    for (const id of ids.values()) expect(Number.isSafeInteger(id) && id >= 0 && id < 2 ** 52).toBe(true);
    expect(new Set(ids.values()).size).toBe(3);
    // a collision (here forced: every id hashes alike) goes to the next free number, in string-id order
    const collided = releaseIds(["b", "a", "c"], () => 2 ** 52 - 2);
    expect([...collided]).toEqual([
      ["a", 2 ** 52 - 2],
      ["b", 2 ** 52 - 1],
      ["c", 0],
    ]);
  });
});
