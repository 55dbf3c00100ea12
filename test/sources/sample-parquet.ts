// Builds the bundled Parquet samples (TACO and the benchmark sets) from their hand-written sources in
// data/sample/.src/*.jsonl, in the column layout of the real hub files. Run after editing a source:
//   pnpm exec tsx test/sources/sample-parquet.ts
// test/sources/samples.test.ts checks that the committed Parquet files still match their sources.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { type ColumnSource, parquetWriteBuffer } from "hyparquet-writer";

export const SAMPLE_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../data/sample");

export type ColumnKind = "string" | "int32" | "int64" | "strings";

export interface SampleTable {
  /** the file under data/sample/, as on the hub */
  file: string;
  /** the hand-written source under data/sample/.src/ */
  source: string;
  columns: Array<[name: string, kind: ColumnKind]>;
}

const TACO_COLUMNS: SampleTable["columns"] = [
  "question",
  "solutions",
  "starter_code",
  "input_output",
  "difficulty",
  "raw_tags",
  "name",
  "source",
  "tags",
  "skill_types",
  "url",
  "Expected Auxiliary Space",
  "time_limit",
  "date",
  "picture_num",
  "memory_limit",
  "Expected Time Complexity",
].map((name) => [name, "string"]);

/** The columns of HumanEval's file on the hub. */
export const HUMANEVAL_COLUMNS: SampleTable["columns"] = [
  ["task_id", "string"],
  ["prompt", "string"],
  ["canonical_solution", "string"],
  ["test", "string"],
  ["entry_point", "string"],
];

/** The columns of MBPP's full test file on the hub. */
export const MBPP_COLUMNS: SampleTable["columns"] = [
  ["task_id", "int32"],
  ["text", "string"],
  ["code", "string"],
  ["test_list", "strings"],
  ["test_setup_code", "string"],
  ["challenge_test_list", "strings"],
];

export const SAMPLE_TABLES: SampleTable[] = [
  { file: "BAAI/TACO/ALL/train-00000-of-00001.parquet", source: "taco-train.jsonl", columns: TACO_COLUMNS },
  { file: "BAAI/TACO/ALL/test-00000-of-00001.parquet", source: "taco-test.jsonl", columns: TACO_COLUMNS },
  {
    file: "openai/openai_humaneval/openai_humaneval/test-00000-of-00001.parquet",
    source: "humaneval.jsonl",
    columns: HUMANEVAL_COLUMNS,
  },
  {
    file: "google-research-datasets/mbpp/full/test-00000-of-00001.parquet",
    source: "mbpp.jsonl",
    columns: MBPP_COLUMNS,
  },
];

export function sourceRows(table: SampleTable): Record<string, unknown>[] {
  const text = readFileSync(path.join(SAMPLE_ROOT, ".src", table.source), "utf8");
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** A Parquet file of `rows` with `columns`; a missing value is null. */
export function parquetTable(rows: Record<string, unknown>[], columns: SampleTable["columns"]): Buffer {
  const columnData: ColumnSource[] = columns.map(([name, kind]) => {
    const values = rows.map((row) => row[name] ?? null);
    if (kind === "int32") return { name, data: Int32Array.from(values as number[]), type: "INT32" };
    if (kind === "int64") return { name, data: BigInt64Array.from(values as bigint[]), type: "INT64" };
    if (kind === "strings") return { name, data: values, nullable: true };
    return { name, data: values, type: "STRING", nullable: true };
  });
  return Buffer.from(parquetWriteBuffer({ columnData }));
}

export function buildTable(table: SampleTable): Buffer {
  return parquetTable(sourceRows(table), table.columns);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  for (const table of SAMPLE_TABLES) {
    writeFileSync(path.join(SAMPLE_ROOT, table.file), buildTable(table));
    process.stdout.write(`wrote data/sample/${table.file}\n`);
  }
}
