// Reads BabelCode questions: `{question_id, title, schema: {params: [{name, type}], return: {type}},
// test_cases: [{idx, inputs, outputs}], entry_fn_name?, entry_cls_name?}` (`entry_point` and
// `class_name` accepted as aliases). Types are parsed and every test value is checked against its
// type here, once, so harnesses can trust what they render.
import { checkValue, parseSchemaType, SchemaError } from "./schema-type.js";
import type { Question, TestCase } from "./types.js";

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Test ids are printed in `TEST-{idx}...` lines and read back, so they must survive that round trip. */
const TEST_ID = /^[A-Za-z0-9_-]+$/;

function asRecord(value: unknown, where: string): Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new SchemaError(`${where} must be a JSON object`);
  }
  return value as Record<string, unknown>;
}

function optionalName(value: unknown, where: string): string | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  if (typeof value !== "string" || !IDENTIFIER.test(value)) {
    throw new SchemaError(`${where} must be an identifier, got ${JSON.stringify(value)}`);
  }
  return value;
}

/** The question's id, for naming it in errors even when the rest of it is broken. */
export function questionIdOf(raw: unknown): string | undefined {
  if (raw === null || typeof raw !== "object") return undefined;
  const record = raw as Record<string, unknown>;
  const id = record.question_id ?? record.qid;
  return typeof id === "string" || typeof id === "number" ? String(id) : undefined;
}

/** Parses and checks one question; throws SchemaError saying what is wrong with it. */
export function parseQuestion(raw: unknown): Question {
  const record = asRecord(raw, "a question");
  const questionId = questionIdOf(record);
  if (questionId === undefined) throw new SchemaError("question has no question_id (string or number)");
  const schema = asRecord(record.schema, "schema");
  if (!Array.isArray(schema.params)) throw new SchemaError("schema.params must be a list of {name, type}");
  const params = schema.params.map((p, i) => {
    const param = asRecord(p, `schema.params[${i}]`);
    const name = param.name;
    if (typeof name !== "string" || !IDENTIFIER.test(name)) {
      throw new SchemaError(`schema.params[${i}].name must be an identifier, got ${JSON.stringify(name)}`);
    }
    if (typeof param.type !== "string") throw new SchemaError(`schema.params[${i}].type must be a string`);
    return { name, type: parseSchemaType(param.type) };
  });
  const names = params.map((p) => p.name);
  if (new Set(names).size !== names.length) throw new SchemaError(`schema.params repeats a name: ${names}`);
  const returns = asRecord(schema.return, "schema.return");
  if (typeof returns.type !== "string") throw new SchemaError("schema.return.type must be a string");
  const returnType = parseSchemaType(returns.type);

  const rawCases = record.test_cases ?? record.test_list;
  if (!Array.isArray(rawCases) || rawCases.length === 0) {
    throw new SchemaError("test_cases must be a non-empty list of {idx, inputs, outputs}");
  }
  const seen = new Set<string>();
  const testCases: TestCase[] = rawCases.map((c, i) => {
    const testCase = asRecord(c, `test_cases[${i}]`);
    const idx = String(testCase.idx ?? i);
    if (!TEST_ID.test(idx))
      throw new SchemaError(`test_cases[${i}].idx ${JSON.stringify(idx)} must match [A-Za-z0-9_-]+`);
    if (seen.has(idx)) throw new SchemaError(`test_cases[${i}].idx ${idx} is used twice`);
    seen.add(idx);
    const inputs = asRecord(testCase.inputs, `test ${idx} inputs`);
    for (const name of Object.keys(inputs)) {
      if (!names.includes(name))
        throw new SchemaError(`test ${idx} has input "${name}", which is not a parameter`);
    }
    for (const param of params) {
      if (!(param.name in inputs))
        throw new SchemaError(`test ${idx} gives no value for parameter "${param.name}"`);
      checkValue(inputs[param.name], param.type, `test ${idx} input ${param.name}`);
    }
    if (!("outputs" in testCase)) throw new SchemaError(`test ${idx} has no outputs`);
    checkValue(testCase.outputs, returnType, `test ${idx} outputs`);
    return { idx, inputs, outputs: testCase.outputs };
  });

  const question: Question = {
    questionId,
    title: typeof record.title === "string" ? record.title : "",
    params,
    returnType,
    testCases,
  };
  // The same aliases predictions may use (HumanEval's `entry_point`, `class_name`).
  const entryFnName = optionalName(record.entry_fn_name ?? record.entry_point, "entry_fn_name");
  const entryClsName = optionalName(record.entry_cls_name ?? record.class_name, "entry_cls_name");
  if (entryFnName) question.entryFnName = entryFnName;
  if (entryClsName) question.entryClsName = entryClsName;
  return question;
}
