// Line-oriented JSON files: read with errors that name the file and line, write one record per line.
import { createReadStream, mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { createInterface } from "node:readline";
import { EvalInputError } from "./types.js";

export interface JsonLine {
  value: unknown;
  /** 1-based line number in the file */
  line: number;
}

/** Every non-blank line of a JSONL file, parsed; a bad line is an error naming file and line. */
export async function readJsonl(path: string): Promise<JsonLine[]> {
  const lines: JsonLine[] = [];
  let stream: ReturnType<typeof createReadStream>;
  try {
    stream = createReadStream(path, "utf8");
    await new Promise<void>((resolve, reject) => {
      stream.once("open", () => resolve());
      stream.once("error", reject);
    });
  } catch (error) {
    throw new EvalInputError(`cannot read ${path}: ${(error as Error).message}. Check the path.`);
  }
  let n = 0;
  for await (const text of createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY })) {
    n++;
    if (text.trim() === "") continue;
    try {
      lines.push({ value: JSON.parse(text), line: n });
    } catch (error) {
      throw new EvalInputError(
        `${path}:${n}: not valid JSON (${(error as Error).message}); each line must be one JSON object.`,
      );
    }
  }
  return lines;
}

export function writeJsonl(path: string, records: Iterable<unknown>): void {
  mkdirSync(dirname(path), { recursive: true });
  let text = "";
  for (const record of records) text += `${JSON.stringify(record)}\n`;
  writeFileSync(path, text);
}

export function writeJson(path: string, value: unknown): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}
