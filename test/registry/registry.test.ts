// Stage names and dialogue methods come from one place, the stage list the CLI hands down: each
// dialogue stage declares the methods it makes, and everything else (validate's upstream, the
// report's rows, export's "not run (disabled)") is derived from those declarations; so is the stage
// whose directory holds the release.
import { describe, expect, it } from "vitest";
import type { DialogueMethod } from "../../pipeline/dialogue.js";
import { StageRegistry } from "../../pipeline/registry.js";
import { STAGES, validateStage } from "../../stages/index.js";
import { declared, PAPER_METHODS } from "../validate/fixtures.js";

const names = (methods: readonly DialogueMethod[]) => methods.map((m) => m.name);
const packing = declared("single-turn-packing");

describe("the stage registry", () => {
  const registry = new StageRegistry(STAGES);

  it("lists the stages in pipeline order and the dialogue stages as they declare themselves", () => {
    expect(registry.names).toEqual(STAGES.map((s) => s.name));
    // audit declares its methods from the config (one per dialogue dataset): none without one
    expect(registry.dialogueStages).toEqual(["pack", "simulate", "correct", "leetcode", "audit"]);
    expect(registry.methodsOf("audit")).toEqual([]);
    expect(names(registry.methodsOf("leetcode"))).toEqual(["leetcode-similar-problem", "leetcode-follow-up"]);
    expect(registry.methodsOf("filter")).toEqual([]);
    expect(registry.methods).toEqual(PAPER_METHODS);
  });

  it("has a stage for every paper method, and validate reads exactly the dialogue stages", () => {
    const makers = registry.dialogueStages.flatMap((stage) => names(registry.methodsOf(stage)));
    expect(makers).toEqual(names(PAPER_METHODS));
    expect(names(registry.methodsOf("correct"))).toEqual(["code-correction"]);
    expect(registry.methods.find((m) => m.name === "leetcode-follow-up")).toMatchObject({
      prefix: "lc-fu",
      paper: { dialogues: 200 },
    });
    expect(validateStage.upstream).toEqual(registry.dialogueStages);
  });

  it("derives a new dialogue stage and its method from its declaration alone", () => {
    const withNew = new StageRegistry([
      { name: "filter" },
      { name: "pack", methods: [packing] },
      { name: "translate", methods: [{ name: "translation", prefix: "tr", card: "translation" }] },
    ]);
    expect(withNew.dialogueStages).toEqual(["pack", "translate"]);
    expect(names(withNew.methodsOf("translate"))).toEqual(["translation"]);
    expect(names(withNew.methods)).toEqual(["single-turn-packing", "translation"]);
  });

  it("names the dialogue stages a config switches off, and their methods", () => {
    const off = registry.disabledDialogueStages({
      leetcode: { enabled: false },
      pack: { enabled: true },
      filter: { enabled: false },
    });
    expect(off).toEqual(["leetcode"]);
    expect(names(registry.methodsOfStages(off))).toEqual(["leetcode-similar-problem", "leetcode-follow-up"]);
  });

  it("refuses two stages that declare the same method, and two methods of one id prefix", () => {
    expect(
      () =>
        new StageRegistry([
          { name: "pack", methods: [packing] },
          { name: "repack", methods: [packing] },
        ]),
    ).toThrow(/stages pack and repack both declare the dialogue method single-turn-packing/);
    expect(
      () =>
        new StageRegistry([
          { name: "pack", methods: [packing] },
          { name: "repack", methods: [{ ...packing, name: "repacking" }] },
        ]),
    ).toThrow(/methods single-turn-packing and repacking both declare the id prefix pack/);
  });

  it("finds the stage that makes the release by its declaration, and refuses two", () => {
    expect(registry.releaseStage()?.name).toBe("export");
    expect(registry.stage("export")).toBe(STAGES.at(-1));
    expect(new StageRegistry([{ name: "filter" }]).releaseStage()).toBeUndefined();
    expect(
      () =>
        new StageRegistry([
          { name: "export", release: {} },
          { name: "mirror", release: {} },
        ]),
    ).toThrow(/stages export and mirror both declare a release/);
  });
});
