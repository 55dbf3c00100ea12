// One adapter per source dataset: a raw row in, the seed pair out, in CodeFeedback-Filtered-Instruction's
// terms (`query`, `answer`, `resource`). A row that cannot be a seed pair is refused with a reason.

/** What an adapter makes of one raw row. */
export type Adapted =
  | {
      query: string;
      answer: string;
      /** the language the dataset itself declares (OSS-Instruct's `lang`), before canonicalisation */
      declaredLang?: string | undefined;
      /** the row's own id in its dataset, when it has one */
      rowId?: string | undefined;
    }
  | { reject: string; detail: string };

export interface SourceAdapter {
  /** the `resource` value of its records, as in CodeFeedback-Filtered-Instruction */
  resource: string;
  /** the dataset it reads, for messages and docs */
  dataset: string;
  adapt(row: unknown, index: number): Adapted;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The reject for a row that is not a JSON object (an array, a string, a number, null). */
export function notAnObject(row: unknown, index: number): { reject: string; detail: string } {
  const kind = row === null ? "null" : Array.isArray(row) ? "an array" : typeof row;
  return { reject: "not-an-object", detail: `row ${index} is ${kind}, expected an object` };
}

/** The string field `name` of `row`, or the reason it is not usable. */
export function stringField(
  row: Record<string, unknown>,
  name: string,
  index: number,
): { value: string } | { reject: string; detail: string } {
  const value = row[name];
  if (value === undefined || value === null) {
    return { reject: "missing-field", detail: `row ${index} has no \`${name}\`` };
  }
  if (typeof value !== "string") {
    return {
      reject: "non-string-field",
      detail: `row ${index}: \`${name}\` is ${typeof value}, expected a string`,
    };
  }
  return { value };
}

/** The usual shape: an object with a query field and an answer field, both non-empty strings. */
export function pairFromFields(
  row: unknown,
  index: number,
  queryField: string,
  answerField: string,
): Adapted {
  if (!isObject(row)) return notAnObject(row, index);
  const query = stringField(row, queryField, index);
  if ("reject" in query) return query;
  const answer = stringField(row, answerField, index);
  if ("reject" in answer) return answer;
  return checkNonEmpty(query.value, answer.value, index);
}

export function checkNonEmpty(query: string, answer: string, index: number): Adapted {
  if (query.trim() === "") return { reject: "empty-query", detail: `row ${index} has an empty query` };
  if (answer.trim() === "") return { reject: "empty-answer", detail: `row ${index} has an empty answer` };
  return { query, answer };
}
