// What simulate and correct share to read a model's answer and choose their records: the code of an
// answer, the seeded sample.
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { codeOfAnswer } from "../../stages/dialogue-kit/code.js";
import { chooseRecords, selectRecords } from "../../stages/dialogue-kit/sample.js";
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

describe("the seeded sample", () => {
  const records = Array.from({ length: 40 }, (_, i) => ({
    id: `r:${i}`,
    lang: i % 4 === 0 ? "html" : i % 2 ? "python" : "cpp",
  }));
  const read = async function* () {
    yield* records;
  };
  it("takes runnable languages, a seeded count, in upstream order, the same on every call", async () => {
    const all = await collect(selectRecords(read, { languages: "runnable", seed: 1 }));
    expect(all).toHaveLength(30);
    const some = await collect(selectRecords(read, { languages: ["python"], count: 5, seed: 1 }));
    expect(some).toHaveLength(5);
    expect(some.every((r) => r.lang === "python")).toBe(true);
    const ids = some.map((r) => Number(r.id.slice(2)));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(await collect(selectRecords(read, { languages: ["python"], count: 5, seed: 1 }))).toEqual(some);
    const other = await collect(selectRecords(read, { languages: ["python"], count: 5, seed: 2 }));
    expect(other).not.toEqual(some);
  });

  it("is chosen in one pass that also gives the progress total and, where it fits, the records", async () => {
    let reads = 0;
    const counted = async function* () {
      reads++;
      yield* records;
    };
    const selection = { languages: ["python"], count: 5, seed: 1 };
    const pass = chooseRecords(counted, selection);
    expect((await pass).size).toBe(5);
    const some = await collect(selectRecords(counted, selection, () => pass));
    expect(reads).toBe(1);
    expect(some).toEqual(await collect(selectRecords(read, selection)));
    // a sample too large for the memory allowed is read again, by its ids: the same records
    reads = 0;
    const tight = chooseRecords(counted, selection, 300);
    expect((await tight).records).toBeUndefined();
    expect(await collect(selectRecords(counted, selection, () => tight))).toEqual(some);
    expect(reads).toBe(2);
    // fewer records than the count: all of them; no count: every record of the languages, no sample
    expect((await chooseRecords(read, { languages: ["python"], count: 100, seed: 1 })).size).toBe(20);
    expect(await chooseRecords(read, { languages: "runnable", seed: 1 })).toEqual({
      size: 30,
      ids: undefined,
    });
  });

  it("stops counting when the stage stops, but never cuts a sample short", async () => {
    const stop = new AbortController();
    const stopping = async function* () {
      for (const [i, record] of records.entries()) {
        if (i === 10) stop.abort();
        yield record;
      }
    };
    // the total of a selection without a count is only for progress: a part of it is fine
    expect(
      (await chooseRecords(stopping, { languages: "runnable", seed: 1 }, undefined, stop.signal)).size,
    ).toBeLessThan(30);
    const selection = { languages: ["python"], count: 5, seed: 1 };
    const whole = await chooseRecords(read, selection);
    expect(await chooseRecords(stopping, selection, undefined, stop.signal)).toEqual(whole);
  });

  it("is the count records of the smallest SHA-256 of (seed, id), whatever the memory allowed", async () => {
    // the definition, pinned: changing it would change every release's sample
    const many = Array.from({ length: 3000 }, (_, i) => ({ id: `m:${(i * 7919) % 3001}`, lang: "python" }));
    const readMany = async function* () {
      yield* many;
    };
    const key = (id: string) => createHash("sha256").update(`7\n${id}`).digest("hex").slice(0, 16);
    const expected = [...many]
      .sort((a, b) => (key(a.id) < key(b.id) ? -1 : key(a.id) > key(b.id) ? 1 : a.id < b.id ? -1 : 1))
      .slice(0, 137);
    const inOrder = many.filter((r) => expected.includes(r));
    const selection = { languages: ["python"], count: 137, seed: 7 };
    for (const memory of [1 << 30, 5_000, 0]) {
      const pass = chooseRecords(readMany, selection, memory);
      expect((await pass).records === undefined).toBe(memory < 1 << 30);
      expect(await collect(selectRecords(readMany, selection, () => pass))).toEqual(inOrder);
    }
  });
});
