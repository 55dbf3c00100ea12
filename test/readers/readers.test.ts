import { writeFile } from "node:fs/promises";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { asyncBufferFromFile, parquetReadObjects } from "hyparquet";
import { parquetWriteBuffer } from "hyparquet-writer";
import { describe, expect, it } from "vitest";
import { readRows } from "../../pipeline/readers/index.js";
import { readJsonArray } from "../../pipeline/readers/json-array.js";
import { readJsonLines } from "../../pipeline/readers/jsonl.js";
import { badCell, parquetParsers } from "../../pipeline/readers/parquet.js";
import type { RawRow } from "../../pipeline/readers/types.js";
import { tempDir } from "../support/temp-dir.js";

const dir = tempDir("readers-");
async function* chunked(bytes: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let i = 0; i < bytes.length; i += size) yield Buffer.from(bytes.subarray(i, i + size));
}

async function collect(rows: AsyncIterable<RawRow>): Promise<RawRow[]> {
  const out: RawRow[] = [];
  for await (const row of rows) out.push(row);
  return out;
}

const opts = { maxRowBytes: 1000 };

let parquetFiles = 0;
/** Writes a Parquet buffer to a fresh file and reads it back through the reader. */
async function readParquetBuffer(buffer: ArrayBuffer): Promise<RawRow[]> {
  const file = path.join(dir, `t${parquetFiles++}.parquet`);
  await writeFile(file, Buffer.from(buffer));
  return collect(readRows(file, opts));
}

/** A little pseudo-random generator so failures reproduce. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const tricky = [
  { instruction: 'say "hi" and [brackets] {braces}', output: "a\\b\nc" },
  { instruction: "unicode: é 中文 🎉", output: "" },
  { nested: { list: [1, [2, [3]], { x: "]" }] }, output: 'ends with backslash \\"' },
  "a bare string",
  42,
  null,
];

const utf8 = (text: string) => new Uint8Array(Buffer.from(text));
/** "def " and a torn two-byte sequence */
const torn = new Uint8Array([0x64, 0x65, 0x66, 0x20, 0xc3, 0x28, 0x29]);

describe("JSON Lines reader", () => {
  it("yields the same rows whatever the chunk boundaries", async () => {
    const text = `${tricky.map((r) => JSON.stringify(r)).join("\n")}\n`;
    for (const size of [1, 2, 3, 7, 64, 4096]) {
      const rows = await collect(readJsonLines(chunked(Buffer.from(text), size), opts));
      expect(rows.map((r) => r.value)).toEqual(tricky);
      expect(rows.map((r) => r.index)).toEqual([0, 1, 2, 3, 4, 5]);
    }
  });

  it("skips blank lines, accepts CRLF and a last line without newline", async () => {
    const text = '{"a":1}\r\n\n   \n{"a":2}\r\n{"a":3}';
    const rows = await collect(readJsonLines(chunked(Buffer.from(text), 5), opts));
    expect(rows.map((r) => r.value)).toEqual([{ a: 1 }, { a: 2 }, { a: 3 }]);
  });

  it("turns malformed JSON, broken UTF-8 and oversized lines into row errors and goes on", async () => {
    const big = JSON.stringify({ x: "y".repeat(5000) });
    const bytes = Buffer.concat([
      Buffer.from('{"a":1}\n{"a": tru}\n'),
      Buffer.from('{"a":"'),
      Buffer.from([0xc3, 0x28]),
      Buffer.from('"}\n'),
      Buffer.from(`${big}\n{"a":4}\n`),
    ]);
    for (const size of [3, 100, 1 << 20]) {
      const rows = await collect(readJsonLines(chunked(bytes, size), opts));
      expect(rows.map((r) => r.error?.reason ?? "ok")).toEqual([
        "ok",
        "malformed-json",
        "invalid-utf8",
        "row-too-large",
        "ok",
      ]);
      expect(rows[3]!.error!.prefix).toBe(big.slice(0, 200));
      expect(rows[3]!.error!.detail).toContain(String(big.length));
      expect(rows[4]).toEqual({ index: 4, value: { a: 4 } });
    }
  });
});

describe("JSON array reader", () => {
  it("yields each element whatever the chunk boundaries, strings with quotes and brackets included", async () => {
    const text = JSON.stringify(tricky, null, 2);
    for (let size = 1; size <= 40; size++) {
      const rows = await collect(readJsonArray(chunked(Buffer.from(text), size), opts));
      expect(rows.map((r) => r.value)).toEqual(tricky);
    }
  });

  it("matches JSON.parse on random documents split at random points", async () => {
    const random = prng(7);
    const alphabet = ['"', "\\", "[", "]", "{", "}", ",", " ", "a", "é", "\n", "\u0001"];
    for (let trial = 0; trial < 60; trial++) {
      const doc = Array.from({ length: 1 + Math.floor(random() * 6) }, () => ({
        s: Array.from(
          { length: Math.floor(random() * 30) },
          () => alphabet[Math.floor(random() * alphabet.length)],
        ).join(""),
        n: [random(), { k: "v" }],
      }));
      const rows = await collect(
        readJsonArray(chunked(Buffer.from(JSON.stringify(doc)), 1 + Math.floor(random() * 20)), opts),
      );
      expect(rows.map((r) => r.value)).toEqual(JSON.parse(JSON.stringify(doc)));
    }
  });

  it("tells an escaped quote from a string's end after any run of backslashes, across chunk boundaries", async () => {
    // JSON doubles each backslash: the runs before a quote are even (the string ends) or odd (\\")
    const strings = Array.from({ length: 5 }, (_, k) => [`${"\\".repeat(k)}`, `${"\\".repeat(k)}"x`]).flat();
    const text = JSON.stringify(strings.map((s, i) => ({ [s]: [s, i] })));
    for (let size = 1; size <= 13; size++) {
      const rows = await collect(readJsonArray(chunked(Buffer.from(text), size), opts));
      expect(rows.map((r) => r.value)).toEqual(JSON.parse(text));
    }
  });

  it("rejects a bad element, a broken UTF-8 element and an oversized element, and keeps the rest", async () => {
    const big = JSON.stringify({ x: "z".repeat(3000) });
    const bytes = Buffer.concat([
      Buffer.from('[{"a":1}, {"a": tru}, {"a":"'),
      Buffer.from([0xff]),
      Buffer.from(`"}, ${big}, {"a":5}]`),
    ]);
    for (const size of [2, 50, 1 << 20]) {
      const rows = await collect(readJsonArray(chunked(bytes, size), opts));
      expect(rows.map((r) => r.error?.reason ?? r.value)).toEqual([
        { a: 1 },
        "malformed-json",
        "invalid-utf8",
        "row-too-large",
        { a: 5 },
      ]);
      expect(rows.map((r) => r.index)).toEqual([0, 1, 2, 3, 4]);
    }
  });

  it("handles an empty array, a byte-order mark, and says so when the file is not an array", async () => {
    expect(await collect(readJsonArray(chunked(Buffer.from(" [ ] "), 1), opts))).toEqual([]);
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('[{"a":1}]')]);
    expect((await collect(readJsonArray(chunked(bom, 3), opts))).map((r) => r.value)).toEqual([{ a: 1 }]);
    await expect(
      collect(readJsonArray(chunked(Buffer.from('{"a":1}'), 4), { ...opts, file: "x.json" })),
    ).rejects.toThrow(/x\.json is not a JSON array/);
  });

  it("reports data after the closing ] and an empty file as one bad row each, without stopping", async () => {
    const trailing = await collect(
      readJsonArray(chunked(Buffer.from('[{"a":1},{"a":2}]\n{"b":3}'), 5), opts),
    );
    expect(trailing.map((r) => r.error?.reason ?? r.value)).toEqual([{ a: 1 }, { a: 2 }, "malformed-json"]);
    expect(trailing[2]!.error!.detail).toMatch(/after the closing \]/);
    expect(trailing[2]!.index).toBe(2);
    const empty = await collect(readJsonArray(chunked(Buffer.from("  \n"), 2), opts));
    expect(empty.map((r) => r.error?.detail)).toEqual(["the file is empty; expected a JSON array"]);
  });

  it("rejects the last element of a truncated file", async () => {
    const rows = await collect(readJsonArray(chunked(Buffer.from('[{"a":1},{"a":"cut'), 4), opts));
    expect(rows.map((r) => r.error?.reason ?? "ok")).toEqual(["ok", "malformed-json"]);
  });
});

describe("chunks read into one buffer", () => {
  /** `bytes` in chunks of `size`, each read into the same buffer over the last (as readRows reads a plain file) */
  async function* reused(bytes: Buffer, size: number): AsyncGenerator<Buffer> {
    const buffer = Buffer.alloc(size);
    for (let i = 0; i < bytes.length; i += size) yield buffer.subarray(0, bytes.copy(buffer, 0, i, i + size));
    buffer.fill("#");
  }

  it("give the rows fresh chunks give: what a row spanning chunks keeps is copied", async () => {
    const big = JSON.stringify({ x: "b".repeat(1500) });
    const items = [...tricky, { s: "é".repeat(300) }, JSON.parse(big), { a: "x" }];
    const lines = Buffer.from(
      `${[...items.map((v) => JSON.stringify(v)), '{"a": tru}', big, "{}"].join("\n")}\n`,
    );
    const array = Buffer.from(JSON.stringify(items, null, 1).replace(/]$/, ', {"a": tru}, 7]'));
    for (const size of [1, 2, 3, 7, 64, 999, 4096]) {
      expect(await collect(readJsonLines(reused(lines, size), opts))).toEqual(
        await collect(readJsonLines(chunked(lines, size), opts)),
      );
      expect(await collect(readJsonArray(reused(array, size), opts))).toEqual(
        await collect(readJsonArray(chunked(array, size), opts)),
      );
    }
    // the fresh-chunk reads themselves are right (checked above against JSON.parse): here, a sample
    expect(
      (await collect(readJsonArray(chunked(array, 7), opts))).map((r) => r.error?.reason ?? "ok"),
    ).toEqual([
      ...items.map((_, i) => (i === items.length - 2 ? "row-too-large" : "ok")),
      "malformed-json",
      "ok",
    ]);
  });
});

describe("readRows", () => {
  it("reads a .json file holding JSON Lines, and gzip", async () => {
    const lines = '{"a":1}\n{"a":2}\n';
    await writeFile(path.join(dir, "lines.json"), lines);
    await writeFile(path.join(dir, "array.jsonl.gz"), gzipSync('[{"a":1},{"a":2}]'));
    await writeFile(path.join(dir, "lines.jsonl.gz"), gzipSync(lines));
    for (const name of ["lines.json", "lines.jsonl.gz"]) {
      const rows = await collect(readRows(path.join(dir, name), opts));
      expect(rows.map((r) => r.value)).toEqual([{ a: 1 }, { a: 2 }]);
    }
    await expect(collect(readRows(path.join(dir, "data.bin"), opts))).rejects.toThrow(/set `format`/);
  });

  it("reads Parquet row group by row group, with int64 as numbers and lists intact", async () => {
    const n = 25;
    const buffer = parquetWriteBuffer({
      columnData: [
        { name: "task_id", data: BigInt64Array.from({ length: n }, (_, i) => BigInt(i)), type: "INT64" },
        {
          name: "text",
          data: Array.from({ length: n }, (_, i) => (i === 3 ? "w".repeat(2000) : `task ${i}`)),
        },
        { name: "tests", data: Array.from({ length: n }, (_, i) => [`assert f(${i})`, "assert g()"]) },
      ],
      rowGroupSize: 10,
    });
    const file = path.join(dir, "bench.parquet");
    await writeFile(file, Buffer.from(buffer));
    const rows = await collect(readRows(file, opts));
    expect(rows).toHaveLength(n);
    expect(rows[0]).toEqual({
      index: 0,
      value: { task_id: 0, text: "task 0", tests: ["assert f(0)", "assert g()"] },
    });
    expect(rows[3]!.error?.reason).toBe("row-too-large");
    expect(rows[24]!.value).toMatchObject({ task_id: 24, text: "task 24" });
  });

  it("rejects a Parquet row whose string is not UTF-8 (not repaired with U+FFFD), and keeps the rest", async () => {
    // string-annotated columns, as the hub's conversions write them; the bytes given as they are
    const schema = [
      { name: "root", num_children: 2 },
      { name: "instruction", type: "BYTE_ARRAY", converted_type: "UTF8", repetition_type: "REQUIRED" },
      { name: "output", type: "BYTE_ARRAY", converted_type: "UTF8", repetition_type: "REQUIRED" },
    ];
    const buffer = parquetWriteBuffer({
      schema,
      columnData: [
        { name: "instruction", data: [utf8("sort a list"), utf8("déjà vu 🙂"), utf8("fine")] },
        { name: "output", data: [utf8("sorted(xs)"), torn, utf8("ok \ufffd kept")] },
      ],
    } as unknown as Parameters<typeof parquetWriteBuffer>[0]);
    const rows = await readParquetBuffer(buffer);
    expect(rows).toHaveLength(3);
    expect(rows[0]).toEqual({ index: 0, value: { instruction: "sort a list", output: "sorted(xs)" } });
    expect(rows[1]!.value).toBeUndefined();
    expect(rows[1]!.error).toMatchObject({
      reason: "invalid-utf8",
      detail: "row 1: column output is not valid UTF-8",
    });
    expect(rows[1]!.error!.prefix).toContain("déjà vu");
    // a real U+FFFD in valid UTF-8 is text like any other
    expect(rows[2]!.value).toEqual({ instruction: "fine", output: "ok \ufffd kept" });
  });

  it("rejects a Parquet row with a map key that is not UTF-8; JSON cells are decoded strictly too", async () => {
    const schema = [
      { name: "root", num_children: 2 },
      { name: "id", type: "INT32", repetition_type: "REQUIRED" },
      { name: "meta", repetition_type: "OPTIONAL", converted_type: "MAP", num_children: 1 },
      { name: "key_value", repetition_type: "REPEATED", num_children: 2 },
      { name: "key", type: "BYTE_ARRAY", converted_type: "UTF8", repetition_type: "REQUIRED" },
      { name: "value", type: "BYTE_ARRAY", converted_type: "UTF8", repetition_type: "OPTIONAL" },
    ];
    const maps = parquetWriteBuffer({
      schema,
      columnData: [
        { name: "id", data: [1, 2] },
        {
          name: "meta",
          data: [
            new Map<unknown, string>([
              [torn, "v1"],
              [new Uint8Array([0xff]), "v2"],
            ]),
            new Map([["source", "evol"]]),
          ],
        },
      ],
    } as unknown as Parameters<typeof parquetWriteBuffer>[0]);
    const mapRows = await readParquetBuffer(maps);
    expect(mapRows[0]!.error).toMatchObject({
      reason: "invalid-utf8",
      detail: "row 0: column meta (a map key) is not valid UTF-8",
    });
    expect(mapRows[1]).toEqual({ index: 1, value: { id: 2, meta: { source: "evol" } } });

    // A JSON column goes through the same strict decoder (hyparquet-writer can only write valid
    // JSON, so the bad cells are checked on the decoder itself).
    const json = parquetWriteBuffer({ columnData: [{ name: "j", data: [{ a: "é" }, null], type: "JSON" }] });
    expect((await readParquetBuffer(json)).map((r) => r.value)).toEqual([{ j: { a: "é" } }, { j: null }]);
    const cell = (bytes: Uint8Array) => badCell({ j: parquetParsers.jsonFromBytes(bytes) }, "");
    expect(cell(utf8("{not json"))).toEqual({ path: "j", reason: "malformed-json" });
    expect(cell(torn)).toEqual({ path: "j", reason: "invalid-utf8" });
    expect(cell(utf8("[1, 2]"))).toBeUndefined();
  });

  it("makes each row from its row group's columns as hyparquet makes its own rows, across row groups", async () => {
    const n = 40;
    const buffer = parquetWriteBuffer({
      columnData: [
        { name: "id", data: Int32Array.from({ length: n }, (_, i) => i) },
        {
          name: "text",
          data: Array.from({ length: n }, (_, i) => `row ${i} ${"t".repeat(i * 7)}`),
          type: "STRING",
        },
        {
          name: "tags",
          data: Array.from({ length: n }, (_, i) => (i % 3 ? [`a${i}`, `b${i}`] : null)),
          type: "JSON",
        },
      ],
      rowGroupSize: 16,
      // small pages: a column of a row group comes in several chunks
      pageSize: 64,
    } as unknown as Parameters<typeof parquetWriteBuffer>[0]);
    const file = path.join(dir, "pages.parquet");
    await writeFile(file, Buffer.from(buffer));
    const rows = await collect(readRows(file, { maxRowBytes: 1 << 20 }));
    const theirs = await parquetReadObjects({ file: await asyncBufferFromFile(file) });
    expect(rows.map((r) => r.value)).toEqual(theirs.map((row) => ({ ...row, tags: row.tags ?? null })));
    expect(Object.keys(rows[5]!.value as object)).toEqual(["id", "text", "tags"]);
  });

  it("reads byte arrays without a string annotation as binary: text when UTF-8, base64 otherwise", async () => {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0xff, 0x00]);
    const buffer = parquetWriteBuffer({
      columnData: [
        { name: "img", data: [png, utf8("plain text")], type: "BYTE_ARRAY" },
        { name: "id", data: [1, 2], type: "INT32" },
      ],
    });
    const rows = await readParquetBuffer(buffer);
    expect(rows).toEqual([
      { index: 0, value: { img: Buffer.from(png).toString("base64"), id: 1 } },
      { index: 1, value: { img: "plain text", id: 2 } },
    ]);
  });
});

describe("bad rows among good ones", () => {
  /** What `reader` reads of `bytes` in chunks of `size`: each value or error reason, by index. */
  const outcomes = async (reader: typeof readJsonLines, bytes: Buffer, size: number) => {
    const rows = await collect(reader(chunked(bytes, size), opts));
    expect(rows.map((r) => r.index)).toEqual(rows.map((_, i) => i));
    return rows.map((r) => r.error?.reason ?? r.value);
  };

  const big = JSON.stringify({ x: "y".repeat(5000) });

  it("JSON Lines: bad JSON, broken UTF-8 and oversized lines are rows of their own; blank lines are none", async () => {
    const bytes = Buffer.concat([
      Buffer.from('{"a":0}\n\n{"a": tru}\n{"a":"'),
      Buffer.from([0xc3, 0x28]),
      Buffer.from(`"}\n  \r\n${big}\n{"a":4}\n{"a":5\n${big}\n{"a":7}`),
    ]);
    for (const size of [3, 100, 1 << 20]) {
      expect(await outcomes(readJsonLines, bytes, size)).toEqual([
        { a: 0 },
        "malformed-json",
        "invalid-utf8",
        "row-too-large",
        { a: 4 },
        "malformed-json",
        "row-too-large",
        { a: 7 },
      ]);
    }
  });

  it("JSON array: bad, broken and oversized elements are rows of their own; so are trailing data and an empty file", async () => {
    const bytes = Buffer.concat([
      Buffer.from('[{"a":0}, {"a": tru}, {"a":"'),
      Buffer.from([0xff]),
      Buffer.from(`"}, ${big}, 4, "five", ${big}, {"a":"]"}]\n{"after": 1}`),
    ]);
    for (const size of [2, 50, 1 << 20]) {
      expect(await outcomes(readJsonArray, bytes, size)).toEqual([
        { a: 0 },
        "malformed-json",
        "invalid-utf8",
        "row-too-large",
        4,
        "five",
        "row-too-large",
        { a: "]" },
        "malformed-json",
      ]);
    }
    expect(await outcomes(readJsonArray, Buffer.from('[{"a":1},{"a":"cut'), 4)).toEqual([
      { a: 1 },
      "malformed-json",
    ]);
    expect(await outcomes(readJsonArray, Buffer.from("  \n"), 2)).toEqual(["malformed-json"]);
  });

  it("Parquet: broken and oversized rows across row groups, each at its index", async () => {
    const n = 23;
    const text = (i: number) =>
      i % 5 === 1 ? torn : utf8(i % 7 === 3 ? "w".repeat(2000) : `déjà ${i} ${'"'.repeat(i % 3)}`);
    const schema = [
      { name: "root", num_children: 3 },
      { name: "id", type: "INT64", repetition_type: "REQUIRED" },
      { name: "instruction", type: "BYTE_ARRAY", converted_type: "UTF8", repetition_type: "REQUIRED" },
      { name: "meta", type: "BYTE_ARRAY", converted_type: "JSON", repetition_type: "OPTIONAL" },
    ];
    const buffer = parquetWriteBuffer({
      schema,
      columnData: [
        { name: "id", data: BigInt64Array.from({ length: n }, (_, i) => BigInt(i)) },
        { name: "instruction", data: Array.from({ length: n }, (_, i) => text(i)) },
        {
          name: "meta",
          data: Array.from({ length: n }, (_, i) => (i % 4 === 0 ? null : { k: [i] })),
        },
      ],
      rowGroupSize: 5,
    } as unknown as Parameters<typeof parquetWriteBuffer>[0]);
    const file = path.join(dir, "groups.parquet");
    await writeFile(file, Buffer.from(buffer));
    const all = await collect(readRows(file, opts));
    expect(all.map((r) => r.index)).toEqual(Array.from({ length: n }, (_, i) => i));
    const expected = (i: number) => (i % 5 === 1 ? "invalid-utf8" : i % 7 === 3 ? "row-too-large" : "ok");
    expect(all.map((r) => r.error?.reason ?? "ok")).toEqual(Array.from({ length: n }, (_, i) => expected(i)));
    expect(all[2]).toEqual({ index: 2, value: { id: 2, instruction: 'déjà 2 ""', meta: { k: [2] } } });
    expect(all[8]).toEqual({ index: 8, value: { id: 8, instruction: 'déjà 8 ""', meta: null } });

    // a cell decoded when its row is read is still each row's own, where a dictionary shares it
    const shared = await readParquetBuffer(
      parquetWriteBuffer({ columnData: [{ name: "j", data: [{ a: [1] }, { a: [1] }], type: "JSON" }] }),
    );
    expect(shared.map((r) => r.value)).toEqual([{ j: { a: [1] } }, { j: { a: [1] } }]);
    expect((shared[0]!.value as { j: unknown }).j).not.toBe((shared[1]!.value as { j: unknown }).j);
  });
});
