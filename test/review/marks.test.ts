// The marks store and what is computed from it: every mark kept (two writers at once lose nothing), a
// reviewer's verdict is their latest mark, Cohen's kappa, and the gates' precision and recall.
import { describe, expect, it } from "vitest";
import { agreementOf, cohensKappa, gateScores } from "../../pipeline/review/agreement.js";
import { contentHash, MarksStore, verdictsDigest } from "../../pipeline/review/marks.js";
import { tempDir } from "../support/temp-dir.js";

const mark = (id: string, verdict: "good" | "bad", reviewer: string) => ({
  stage: "validate",
  id,
  verdict,
  reviewer,
  hash: "h",
});

describe("marks", () => {
  it("keeps every mark of two stores writing at once, and a reviewer's latest is their verdict", () => {
    const dir = tempDir("cf-marks-");
    expect(MarksStore.read(dir)).toBeUndefined();
    expect(verdictsDigest(dir)).toBeUndefined();
    const a = MarksStore.open(dir);
    const b = MarksStore.open(dir);
    for (let i = 0; i < 50; i++) {
      a.add(mark("d1", i % 2 ? "good" : "bad", "ann"));
      b.add(mark("d1", "bad", "bob"));
    }
    a.add({ ...mark("d2", "bad", "ann"), reason: "not-code", note: "<b>x</b>" });
    expect([...a.all()]).toHaveLength(101);
    expect(b.history("d1")).toHaveLength(100);
    const current = a.current().map((m) => [m.id, m.reviewer, m.verdict]);
    expect(current).toEqual([
      ["d1", "ann", "good"],
      ["d1", "bob", "bad"],
      ["d2", "ann", "bad"],
    ]);
    a.close();
    b.close();
    // what export reads back: each reviewer's latest, with its reason and note verbatim
    const read = MarksStore.read(dir)!;
    expect(read.current().filter((m) => m.verdict === "bad")).toMatchObject([
      { id: "d1", reviewer: "bob" },
      { id: "d2", reviewer: "ann", reason: "not-code", note: "<b>x</b>" },
    ]);
    read.close();
    const before = verdictsDigest(dir);
    expect(before).toMatch(/^[0-9a-f]{16}$/);
    const c = MarksStore.open(dir);
    c.add(mark("d2", "good", "ann"));
    c.close();
    expect(verdictsDigest(dir)).not.toBe(before);
  });

  it("hashes a dialogue by its messages, whatever meta a later stage adds", () => {
    const messages = [{ role: "user", content: "hi" }];
    expect(contentHash({ id: "x", messages, meta: { a: 1 } })).toBe(contentHash({ id: "x", messages }));
    expect(contentHash({ id: "x", messages: [{ role: "user", content: "hi!" }] })).not.toBe(
      contentHash({ id: "x", messages }),
    );
    expect(contentHash({ id: "q", query: "a" })).not.toBe(contentHash({ id: "q", query: "b" }));
  });
});

describe("agreement", () => {
  it("computes Cohen's kappa", () => {
    // 4 agree bad, 4 agree good, 2 disagree: po = 0.8, pe = 0.5
    const pairs: ["good" | "bad", "good" | "bad"][] = [
      ...Array(4).fill(["bad", "bad"]),
      ...Array(4).fill(["good", "good"]),
      ["bad", "good"],
      ["good", "bad"],
    ];
    expect(cohensKappa(pairs)).toBeCloseTo(0.6, 10);
    expect(cohensKappa([])).toBeUndefined();
    // both always say bad: chance explains everything
    expect(cohensKappa([["bad", "bad"]])).toBeUndefined();
    expect(
      cohensKappa([
        ["bad", "good"],
        ["good", "bad"],
      ]),
    ).toBeCloseTo(-1, 10);
  });

  it("pairs reviewers over the records both judged", () => {
    const at = { seq: 0, at: "", stage: "s", hash: "h" };
    const agreement = agreementOf([
      { ...at, id: "1", reviewer: "ann", verdict: "bad" },
      { ...at, id: "2", reviewer: "ann", verdict: "good" },
      { ...at, id: "1", reviewer: "bob", verdict: "bad" },
      { ...at, id: "2", reviewer: "bob", verdict: "good" },
      { ...at, id: "3", reviewer: "cy", verdict: "bad" },
    ]);
    expect(agreement).toEqual([{ a: "ann", b: "bob", both: 2, kappa: 1 }]);
  });

  it("scores each gate's precision and recall against bad marks", () => {
    const scores = gateScores([
      { bad: true, gates: ["silent-failure", "silent-failure"] },
      { bad: true, gates: [] },
      { bad: false, gates: ["silent-failure", "wrong-language"] },
      { bad: true, gates: ["wrong-language"] },
    ]);
    expect(scores).toEqual([
      { gate: "silent-failure", fired: 2, firedBad: 1, precision: 0.5, recall: 1 / 3 },
      { gate: "wrong-language", fired: 2, firedBad: 1, precision: 0.5, recall: 1 / 3 },
    ]);
    expect(gateScores([{ bad: false, gates: ["x"] }])[0]!.recall).toBeUndefined();
  });
});
