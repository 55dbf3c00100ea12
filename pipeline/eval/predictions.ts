// Reads predictions: JSONL `{qid, id, language, code, entry_fn_name?, entry_cls_name?}`, with
// BabelCode's `entry_point` and `class_name` accepted as aliases and its display names for languages
// ("Python", "C++", "CSharp", "Javascript") mapped to ours.
import { canonicalLanguage } from "../code/languages.js";
import { type JsonLine, readJsonl } from "./jsonl.js";
import { EvalInputError, type Prediction } from "./types.js";

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

function idText(value: unknown): string | undefined {
  return typeof value === "string" || typeof value === "number" ? String(value) : undefined;
}

/** Checks and normalises predictions; throws EvalInputError naming the file, the line and the fix. */
export function parsePredictions(lines: readonly JsonLine[], source = "predictions"): Prediction[] {
  const predictions: Prediction[] = [];
  const seen = new Map<string, number>();
  for (const { value, line } of lines) {
    const where = `${source}:${line}`;
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      throw new EvalInputError(`${where}: a prediction must be a JSON object {qid, id, language, code}`);
    }
    const record = value as Record<string, unknown>;
    const qid = idText(record.qid);
    const id = idText(record.id);
    if (qid === undefined) throw new EvalInputError(`${where}: "qid" (the question id) is missing`);
    if (id === undefined) throw new EvalInputError(`${where}: "id" (the prediction id) is missing`);
    if (typeof record.language !== "string") throw new EvalInputError(`${where}: "language" is missing`);
    const language = canonicalLanguage(record.language);
    if (!language) {
      throw new EvalInputError(
        `${where}: unknown language "${record.language}"; use e.g. python, cpp, java, go`,
      );
    }
    if (typeof record.code !== "string") throw new EvalInputError(`${where}: "code" must be a string`);
    const key = `${language}\u0000${qid}\u0000${id}`;
    const earlier = seen.get(key);
    if (earlier !== undefined) {
      throw new EvalInputError(
        `${where}: prediction id "${id}" for question ${qid} in ${language} repeats line ${earlier}; ids must be unique per question.`,
      );
    }
    seen.set(key, line);
    const prediction: Prediction = { qid, id, language, code: record.code };
    const fn = record.entry_fn_name ?? record.entry_point;
    const cls = record.entry_cls_name ?? record.class_name;
    for (const [name, field] of [
      [fn, "entry_fn_name"],
      [cls, "entry_cls_name"],
    ] as const) {
      if (name !== undefined && name !== null && (typeof name !== "string" || !IDENTIFIER.test(name))) {
        throw new EvalInputError(`${where}: "${field}" must be an identifier, got ${JSON.stringify(name)}`);
      }
    }
    if (typeof fn === "string") prediction.entry_fn_name = fn;
    if (typeof cls === "string") prediction.entry_cls_name = cls;
    predictions.push(prediction);
  }
  return predictions;
}

export async function readPredictions(path: string): Promise<Prediction[]> {
  return parsePredictions(await readJsonl(path), path);
}
