import { describe, expect, it } from "vitest";
import {
  codeFeedbackLine,
  DialogueTally,
  dialogueId,
  dialogueProblems,
  makeDialogue,
  parseDialogue,
  turnCount,
} from "../../pipeline/dialogue.js";
import { declared, PAPER_METHODS } from "../validate/fixtures.js";

const packing = declared("single-turn-packing");
const followUp = declared("leetcode-follow-up");

const turns = [
  { role: "user" as const, content: "Write a function that adds two numbers." },
  { role: "assistant" as const, content: "```python\ndef add(a, b):\n    return a + b\n```" },
  { role: "user" as const, content: "Now make it add three." },
  { role: "assistant" as const, content: "```python\ndef add(a, b, c):\n    return a + b + c\n```" },
];

describe("the dialogue record", () => {
  it("builds a well-formed record with a stable id from method and sources", () => {
    const d = makeDialogue({
      method: packing,
      sources: ["a:1", "a:2"],
      messages: turns,
      lang: "python",
    });
    expect(d.id).toBe(dialogueId(packing, ["a:1", "a:2"]));
    // the ids the paper's methods gave before they declared themselves: a rerun keeps every id
    expect(d.id).toBe("pack-263919cadd676ea6");
    expect(dialogueId(followUp, ["t:1"], "language")).toBe("lc-fu-3ce9a4b52dd7f12b");
    expect(dialogueId(packing, ["a:2", "a:1"])).not.toBe(d.id);
    expect(dialogueId(declared("code-correction"), ["a:1", "a:2"])).not.toBe(d.id);
    expect(dialogueId(followUp, ["t:1"], "complexity")).not.toBe(dialogueId(followUp, ["t:1"], "language"));
    expect(parseDialogue(d)).toEqual({ ok: true, dialogue: d });
    expect(d.method).toBe("single-turn-packing");
    expect(turnCount(d)).toBe(2);
    expect(Object.keys(codeFeedbackLine(d, 1))).toEqual(["id", "messages"]);
  });

  it("names what is wrong with a malformed dialogue", () => {
    expect(dialogueProblems([turns[1]!, turns[0]!])).toContain("message 0: expected user, found assistant");
    expect(dialogueProblems(turns.slice(0, 3))).toContain("the dialogue must end with an assistant message");
    expect(dialogueProblems([{ role: "system", content: "s" }, ...turns.slice(0, 2)])).toEqual([]);
    expect(dialogueProblems([...turns.slice(0, 2), { role: "system", content: "s" }])[0]).toMatch(
      /system message may only come first/,
    );
    expect(dialogueProblems([turns[0]!, { role: "assistant", content: "  " }])).toContain(
      "message 1 (assistant) is empty",
    );
    expect(() =>
      makeDialogue({
        method: declared("code-correction"),
        sources: ["x"],
        messages: [turns[0]!],
        lang: "python",
      }),
    ).toThrow(/malformed/);
    const nope = { id: "x", messages: turns, method: "nope", sources: ["a"], lang: "python", meta: {} };
    // any method is a dialogue; checked against the run's declared methods, an undeclared one is not
    expect(parseDialogue(nope).ok).toBe(true);
    expect(parseDialogue(nope, PAPER_METHODS)).toEqual({
      ok: false,
      error: expect.stringMatching(
        /^method: no stage of this run declares nope \(declared: single-turn-packing, /,
      ),
    });
    const extra = parseDialogue({
      id: "x",
      messages: turns,
      method: "code-correction",
      sources: ["a"],
      lang: "python",
      meta: {},
      more: 1,
    });
    expect(extra.ok).toBe(false);
  });

  it("tallies dialogues and turns per method next to the paper", () => {
    const tally = new DialogueTally(PAPER_METHODS);
    tally.add({ method: "single-turn-packing", messages: turns, lang: "python" });
    tally.add({ method: "single-turn-packing", messages: [...turns, ...turns.slice(0, 2)], lang: "java" });
    const r = tally.result()["single-turn-packing"]!;
    expect(r).toMatchObject({
      dialogues: 2,
      turns: 5,
      turns_per_dialogue: 2.5,
      by_lang: { python: 1, java: 1 },
    });
    expect(r.paper?.dialogues).toBe(16_600);
    expect(tally.describe()[0]).toMatch(/2 dialogues, 5 turns, 2.5 turns per dialogue \(paper: 16,600/);
    // 2.5 against the paper's 2.0: a deviation over 20%, called out
    expect(tally.describe()[0]).toMatch(/2 turns per dialogue; \+25%, over the 20% mark\)$/);
  });

  it("orders a method's languages by count, then by name, whatever order the dialogues came in", () => {
    const langs = ["php", "go", "cpp", "go", "kotlin"];
    const orders = [langs, [...langs].reverse()].map((order) => {
      const tally = new DialogueTally(PAPER_METHODS);
      for (const lang of order) tally.add({ method: "single-turn-packing", messages: turns, lang });
      return Object.keys(tally.result()["single-turn-packing"]!.by_lang);
    });
    expect(orders[0]).toEqual(["go", "cpp", "kotlin", "php"]);
    expect(orders[1]).toEqual(orders[0]);
  });
});
