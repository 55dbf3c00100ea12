// The bundled samples are in each source's exact on-hub format, and the Parquet ones still match the
// hand-written sources they are built from (data/sample/.src, see sample-parquet.ts).
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readRows } from "../../pipeline/readers/index.js";
import { SAMPLE_ROOT, SAMPLE_TABLES, sourceRows } from "./sample-parquet.js";

async function rowsOf(file: string): Promise<unknown[]> {
  const rows: unknown[] = [];
  for await (const row of readRows(path.join(SAMPLE_ROOT, file), { maxRowBytes: 1 << 20 })) {
    expect(row.error).toBeUndefined();
    rows.push(row.value);
  }
  return rows;
}

const FORMATS: Array<{ file: string; keys: string[] }> = [
  {
    file: "ise-uiuc/Magicoder-OSS-Instruct-75K/data-oss_instruct-decontaminated.jsonl",
    keys: ["lang", "raw_index", "index", "seed", "openai_fingerprint", "problem", "solution"],
  },
  {
    file: "ajibawa-2023/Python-Code-23k-ShareGPT/Python-Code-23k-ShareGPT.json",
    keys: ["id", "conversations"],
  },
  {
    file: "ise-uiuc/Magicoder-Evol-Instruct-110K/data-evol_instruct-decontaminated.jsonl",
    keys: ["instruction", "response"],
  },
  { file: "nickrosh/Evol-Instruct-Code-80k-v1/EvolInstruct-Code-80k.json", keys: ["instruction", "output"] },
];

describe("bundled samples", () => {
  it.each(FORMATS)("$file has about 30 rows with exactly the source's fields", async ({ file, keys }) => {
    const rows = await rowsOf(file);
    expect(rows.length).toBe(30);
    for (const row of rows) expect(Object.keys(row as object)).toEqual(keys);
  });

  it("cover several programming languages", async () => {
    const rows = (await rowsOf(FORMATS[0]!.file)) as Array<{ lang: string }>;
    expect(new Set(rows.map((r) => r.lang)).size).toBeGreaterThanOrEqual(10);
  });

  it("keep ShareGPT's human/gpt turn format", async () => {
    const rows = (await rowsOf(FORMATS[1]!.file)) as Array<{
      conversations: Array<{ from: string; value: string }>;
    }>;
    for (const row of rows) {
      for (const turn of row.conversations) {
        expect(["human", "gpt"]).toContain(turn.from);
        expect(typeof turn.value).toBe("string");
      }
    }
  });

  it.each(SAMPLE_TABLES)("$file matches its hand-written source column for column", async (table) => {
    const rows = (await rowsOf(table.file)) as Array<Record<string, unknown>>;
    const expected = sourceRows(table);
    expect(rows).toHaveLength(expected.length);
    expect(Object.keys(rows[0]!)).toEqual(table.columns.map(([name]) => name));
    rows.forEach((row, i) => {
      for (const [name] of table.columns) expect(row[name] ?? null).toEqual(expected[i]![name] ?? null);
    });
  });
});
