// What simulate and correct share to read a model's answer and choose their records: the code of an
// answer, the seeded sample.
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { PipelineRecord } from "../../pipeline/record.js";
import { type StageIndex, sampleOf } from "../../pipeline/runner/read.js";
import type { IndexRow } from "../../pipeline/store/output-index.js";
import { codeOfAnswer } from "../../stages/dialogue-kit/code.js";
import type { Selection } from "../../stages/dialogue-kit/config.js";
import { sampleOptions } from "../../stages/dialogue-kit/sample.js";
import { collect } from "../support/runner-kit.js";

describe("the code of an answer", () => {
  it("runs every Python block in order as one cell, and the main block elsewhere", () => {
    const py =
      "Define:\n```python\ndef f():\n    return 1\n```\nUse:\n```python\nprint(f())\n```\nOutput:\n```\n1\n```";
    expect(codeOfAnswer(py, "python")).toEqual({
      lang: "python",
      code: "def f():\n    return 1\n\nprint(f())",
    });
    const js =
      "```javascript\nconsole.log(1);\nconsole.log(2);\n```\nor\n```javascript\nconsole.log(3);\n```";
    expect(codeOfAnswer(js, "javascript")).toEqual({
      lang: "javascript",
      code: "console.log(1);\nconsole.log(2);",
    });
    expect(codeOfAnswer("No code here, only words.", "python")).toBeUndefined();
    expect(codeOfAnswer("```html\n<p>hi</p>\n```", "html")).toBeUndefined();
  });
});

/**
 * The records as an upstream's index and its read: the index's rows name each record by its place
 * (the real index, built from a stage's parts, is tested in test/store/output-index.test.ts).
 */
function upstreamOf(records: readonly PipelineRecord[]) {
  const lines = { read: 0, streamed: 0 };
  const rows: IndexRow[] = records.map((r, i) => ({
    id: r.id,
    at: i,
    fields: (typeof r.lang === "string" ? { lang: r.lang } : {}) as Record<string, string>,
    part: 0,
    offset: i,
    length: 1,
    item: 0,
    sha: "",
  }));
  const index: StageIndex = {
    rows,
    records: async function* (some) {
      for (const row of some) {
        lines.read++;
        yield records[row.offset]!;
      }
    },
  };
  const read = async function* () {
    for (const record of records) {
      lines.streamed++;
      yield record;
    }
  };
  return { upstream: { index, read }, lines };
}

/** The selection as a dialogue stage takes it (`ctx.sample`): a sample from the index, else every record streamed. */
const select = (upstream: ReturnType<typeof upstreamOf>["upstream"], selection: Selection) =>
  sampleOf(upstream.read, async () => upstream.index, sampleOptions(selection));

const recordsOf = (sample: ReturnType<typeof select>) => collect(sample.records());

describe("the seeded sample", () => {
  const records = Array.from({ length: 40 }, (_, i) => ({
    id: `r:${i}`,
    lang: i % 4 === 0 ? "html" : i % 2 ? "python" : "cpp",
  }));
  const { upstream } = upstreamOf(records);
  it("takes runnable languages, a seeded count, in upstream order, the same on every call", async () => {
    const all = await recordsOf(select(upstream, { languages: "runnable", seed: 1 }));
    expect(all).toHaveLength(30);
    const some = await recordsOf(select(upstream, { languages: ["python"], count: 5, seed: 1 }));
    expect(some).toHaveLength(5);
    expect(some.every((r) => r.lang === "python")).toBe(true);
    const ids = some.map((r) => Number(r.id.slice(2)));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(await recordsOf(select(upstream, { languages: ["python"], count: 5, seed: 1 }))).toEqual(some);
    const other = await recordsOf(select(upstream, { languages: ["python"], count: 5, seed: 2 }));
    expect(other).not.toEqual(some);
  });

  it("reads the sample's records alone, and streams the upstream only without a count", async () => {
    const { upstream, lines } = upstreamOf(records);
    const selection = { languages: ["python"], count: 5, seed: 1 };
    expect(await recordsOf(select(upstream, selection))).toHaveLength(5);
    expect(lines).toEqual({ read: 5, streamed: 0 });
    // fewer records than the count: all of them; no count: every record of the languages, streamed
    expect(await select(upstream, { languages: ["python"], count: 100, seed: 1 }).size()).toBe(20);
    expect(await select(upstream, { languages: "runnable", seed: 1 }).size()).toBe(30);
    lines.read = 0;
    expect(await recordsOf(select(upstream, { languages: "runnable", seed: 1 }))).toHaveLength(30);
    expect(lines).toEqual({ read: 0, streamed: 40 });
  });

  it("is the count records of the smallest SHA-256 of (seed, id)", async () => {
    // the definition, pinned: changing it would change every release's sample
    const many = Array.from({ length: 3000 }, (_, i) => ({
      id: `m:${(i * 7919) % 3001}`,
      lang: i % 5 ? "python" : "html",
    }));
    const key = (id: string) => createHash("sha256").update(`7\n${id}`).digest("hex").slice(0, 16);
    const expected = many
      .filter((r) => r.lang === "python")
      .sort((a, b) => (key(a.id) < key(b.id) ? -1 : key(a.id) > key(b.id) ? 1 : a.id < b.id ? -1 : 1))
      .slice(0, 137);
    const inOrder = many.filter((r) => expected.includes(r));
    const selection = { languages: ["python"], count: 137, seed: 7 };
    expect(await recordsOf(select(upstreamOf(many).upstream, selection))).toEqual(inOrder);
  });
});
