// The exported files as Parquet, written with hyparquet-writer (the companion of hyparquet, which the
// readers already use): pure JavaScript, no native build, and it writes nested columns, so `messages`
// is a list of {role, content} structs as in the hub's Parquet conversion of m-a-p/Code-Feedback. Rows
// go in row groups of a fixed size, so a file is never encoded in one piece.
import type { SchemaElement } from "hyparquet";
import { fileWriter, ParquetWriter } from "hyparquet-writer";
import { commitWritten, temporaryName, type WrittenFile } from "./atomic.js";

const text = (name: string): SchemaElement => ({
  name,
  type: "BYTE_ARRAY",
  converted_type: "UTF8",
  repetition_type: "REQUIRED",
});

const integer = (name: string): SchemaElement => ({ name, type: "INT64", repetition_type: "REQUIRED" });

/** A required list column of `element` (a text, or a struct of texts), as the hub converts lists. */
const list = (name: string, element: SchemaElement[]): SchemaElement[] => [
  { name, repetition_type: "REQUIRED", converted_type: "LIST", num_children: 1 },
  { name: "list", repetition_type: "REPEATED", num_children: 1 },
  ...element,
];

/** `messages: [{role, content}]`, a list of structs as the hub converts m-a-p/Code-Feedback */
const MESSAGES = list("messages", [
  { name: "element", repetition_type: "REQUIRED", num_children: 2 },
  text("role"),
  text("content"),
]);

/** `{id, messages: [{role, content}]}` with an integer id, as m-a-p/Code-Feedback */
export const CODE_FEEDBACK_SCHEMA: SchemaElement[] = [
  { name: "root", num_children: 2 },
  integer("id"),
  ...MESSAGES,
];

/** the `code-feedback-full` config: the public columns and how each dialogue was made and validated */
export const CODE_FEEDBACK_FULL_SCHEMA: SchemaElement[] = [
  { name: "root", num_children: 9 },
  integer("id"),
  text("dialogue_id"),
  text("method"),
  text("lang"),
  ...list("sources", [text("element")]),
  ...MESSAGES,
  { ...text("system"), repetition_type: "OPTIONAL" },
  text("validation"),
  ...list("validation_tags", [text("element")]),
];

/** `{query, answer, resource, lang}` */
export const FILTERED_INSTRUCTION_SCHEMA: SchemaElement[] = [
  { name: "root", num_children: 4 },
  text("query"),
  text("answer"),
  text("resource"),
  text("lang"),
];

/** Writes `rows` (objects with exactly the schema's top-level columns) to `target` atomically. */
export async function writeParquetAtomically(
  target: string,
  schema: SchemaElement[],
  rows: readonly Record<string, unknown>[],
  rowGroupSize: number,
): Promise<WrittenFile> {
  const tmp = temporaryName(target);
  const columns = topLevelColumns(schema);
  const writer = new ParquetWriter({ writer: fileWriter(tmp), schema, createdBy: "codefeedback export" });
  for (let start = 0; start < rows.length; start += rowGroupSize) {
    const group = rows.slice(start, start + rowGroupSize);
    await writer.write({
      columnData: columns.map((name) => ({
        name,
        // INT64 columns take bigints; the JSONL's ids are plain numbers (exact: they stay below 2^53)
        data: group.map((row) => (typeof row[name] === "number" ? BigInt(row[name]) : row[name])),
      })),
      rowGroupSize,
    });
  }
  await writer.finish();
  return commitWritten(tmp, target);
}

/** Names of the root's children, in order (nested groups count as one column). */
function topLevelColumns(schema: SchemaElement[]): string[] {
  const names: string[] = [];
  let i = 1;
  const skip = (at: number): number => {
    let next = at + 1;
    for (let c = 0; c < (schema[at]!.num_children ?? 0); c++) next = skip(next);
    return next;
  };
  while (i < schema.length) {
    names.push(schema[i]!.name);
    i = skip(i);
  }
  return names;
}
