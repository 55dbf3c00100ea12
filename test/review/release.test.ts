// What marks do to the release (stages/export/review.ts): a dialogue some reviewer's current mark calls
// bad leaves it unless the mark is stale; the Review section's figures; and `--sample`'s queue, drawn
// stratified by method and language, the same for the same seed.
import { describe, expect, it } from "vitest";
import type { Dialogue } from "../../pipeline/dialogue.js";
import type { PipelineRecord } from "../../pipeline/record.js";
import { ReviewApp } from "../../pipeline/review/app.js";
import { contentHash, MarksStore } from "../../pipeline/review/marks.js";
import { StageStore } from "../../pipeline/store/stage-store.js";
import { ReleaseReview, reviewSection } from "../../stages/export/review.js";
import { tempDir } from "../support/temp-dir.js";

function dialogue(id: string, text: string, gates: string[] = [], outcome = "passed"): Dialogue {
  return {
    id,
    method: "interaction-simulation",
    lang: "python",
    sources: [],
    messages: [
      { role: "user", content: text },
      { role: "assistant", content: "```python\nprint(1)\n```" },
    ],
    meta: { validation: { outcome, gates: gates.map((rule) => ({ rule })) } },
  } as unknown as Dialogue;
}

async function* records(...items: PipelineRecord[]) {
  yield* items;
}

describe("marks in the release", () => {
  it("drops a dialogue marked bad on its current content, not one whose mark is stale", async () => {
    const dir = tempDir("cf-review-release-");
    expect(new ReleaseReview(dir).active).toBe(false);
    const store = MarksStore.open(dir);
    const a = dialogue("a", "task a", ["silent-failure"]);
    const b = dialogue("b", "task b");
    const c = dialogue("c", "task c", ["silent-failure"]);
    store.add({
      stage: "validate",
      id: "a",
      verdict: "bad",
      reason: "not-code",
      note: "n",
      reviewer: "ann",
      hash: contentHash(a),
    });
    store.add({ stage: "validate", id: "a", verdict: "good", reviewer: "bob", hash: contentHash(a) });
    // b was marked bad on other content than it has now
    store.add({
      stage: "validate",
      id: "b",
      verdict: "bad",
      reviewer: "ann",
      hash: contentHash(dialogue("b", "old")),
    });
    store.add({ stage: "validate", id: "c", verdict: "good", reviewer: "ann", hash: contentHash(c) });
    store.add({ stage: "validate", id: "c", verdict: "good", reviewer: "bob", hash: contentHash(c) });
    store.close();
    // d was rejected by validate for a failing final code, and reviewed bad
    const d = dialogue("d", "task d", [], "failed");
    const s2 = MarksStore.open(dir);
    s2.add({ stage: "validate", id: "d", verdict: "bad", reviewer: "bob", hash: contentHash(d) });
    s2.close();
    const review = new ReleaseReview(dir);
    expect(review.active).toBe(true);
    expect(review.judge(a)).toMatchObject({
      id: "a",
      reason: "review:not-code",
      detail: expect.stringContaining("ann"),
    });
    expect(review.judge(b)).toBeUndefined();
    expect(review.judge(c)).toBeUndefined();
    const summary = await review.summary(records({ id: "d", reason: "final-code-failed", record: d }));
    expect(summary).toMatchObject({ reviewers: 2, reviewed: 4, bad: 2, dropped: 1, stale: 1 });
    expect(summary.agreement).toEqual([{ a: "ann", b: "bob", both: 2, kappa: 0 }]);
    expect(summary.gates).toEqual([
      { gate: "final-code-failed", fired: 1, firedBad: 1, precision: 1, recall: 0.5 },
      { gate: "silent-failure", fired: 2, firedBad: 1, precision: 0.5, recall: 0.5 },
    ]);
    const html = reviewSection(summary);
    expect(html).toContain('<section id="review">');
    expect(html).toContain("<td>silent-failure</td>");
    expect(reviewSection(undefined)).toBe("");
  });
});

describe("the review queue", () => {
  it("draws a sample stratified by method and language, the same for a seed", () => {
    const dataDir = tempDir("cf-review-queue-");
    const writer = new StageStore(dataDir, "validate").newPart();
    const strata = [
      ["interaction-simulation", "python", 80],
      ["interaction-simulation", "go", 10],
      ["code-correction", "python", 9],
      ["code-correction", "rust", 1],
    ] as const;
    let s = 0;
    for (const [method, lang, count] of strata)
      for (let i = 0; i < count; i++)
        writer.append({ s: s++, o: [{ id: `${lang}-${method}-${i}`, method, lang }] });
    writer.close();
    const app = new ReviewApp(
      {
        dataDir,
        stages: ["validate"],
        look: (name) => ({ name, state: "complete", parts: new StageStore(dataDir, name).parts() }),
      },
      [],
    );
    try {
      const queue = app.sample("validate", 10, 7);
      expect(queue).toHaveLength(10);
      expect(new Set(queue).size).toBe(10);
      const count = (prefix: string) => queue.filter((id) => id.startsWith(prefix)).length;
      // one each, then 4.8, 0.6, 0.54 and 0.06 of the other 6: 4, the two left to the largest remainders
      expect([count("python-interaction"), count("go-"), count("python-code"), count("rust-")]).toEqual([
        6, 2, 1, 1,
      ]);
      expect(
        app
          .sample("validate", 2, 7)
          .map((id) => id.split("-")[0])
          .sort(),
      ).toEqual(["go", "python"]);
      expect(app.sample("validate", 10, 7)).toEqual(queue);
      expect(app.sample("validate", 10, 8)).not.toEqual(queue);
      expect(app.sample("validate", 500, 7)).toHaveLength(100);
    } finally {
      app.close();
    }
  });
});
