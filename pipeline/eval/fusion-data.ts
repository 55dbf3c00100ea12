// Rows of SandboxFusion's dataset types and the answers evaluated against them. SandboxFusion
// stores `test` and `labels` as JSON text in some tables and as objects in others; both are read.
import { canonicalLanguage, type LanguageName } from "../code/languages.js";
import type { JsonLine } from "./jsonl.js";
import { EvalInputError } from "./types.js";

/** AutoEval: the model's code with test code appended (or put at `#<INSERT>`), run in the execution language. */
export interface AutoEvalProblem {
  id: string;
  content: string;
  testCode: string;
  /** file name -> base64 content, written beside the program */
  assets: Record<string, string>;
  programmingLanguage: LanguageName;
  /** language the combined program runs in: a canonical name or a SandboxFusion id (e.g. "pytest") */
  executionLanguage: string;
}

export interface StdioCase {
  stdin: string;
  stdout: string;
}

/** CommonOJ: a complete program judged on stdin/stdout cases. */
export interface CommonOJProblem {
  id: string;
  content: string;
  cases: StdioCase[];
  /** labels.programming_language, when the row names one */
  language?: LanguageName;
}

/** A model's answer to a SandboxFusion problem: raw `completion` (code is extracted) or bare `code`. */
export interface FusionAnswer {
  /** problem id */
  qid: string;
  /** sample id, unique per problem: `sample_id` or the answer's position among the problem's answers */
  id: string;
  completion?: string;
  code?: string;
  language?: LanguageName;
}

function fail(where: string, message: string): never {
  throw new EvalInputError(`${where}: ${message}`);
}

function record(value: unknown, where: string, what: string): Record<string, unknown> {
  if (typeof value === "string") {
    try {
      return record(JSON.parse(value), where, what);
    } catch (error) {
      if (error instanceof EvalInputError) throw error;
      fail(where, `${what} is a string but not JSON (${(error as Error).message})`);
    }
  }
  if (value === null || typeof value !== "object" || Array.isArray(value))
    fail(where, `${what} must be an object`);
  return value as Record<string, unknown>;
}

function idOf(row: Record<string, unknown>, where: string): string {
  const id = row.id;
  if (typeof id !== "string" && typeof id !== "number") fail(where, `"id" (string or number) is missing`);
  return String(id);
}

function languageOf(value: unknown, where: string, field: string): LanguageName {
  const language = typeof value === "string" ? canonicalLanguage(value) : undefined;
  if (!language)
    fail(where, `${field} ${JSON.stringify(value)} is not a language we know; use e.g. python, cpp, go`);
  return language;
}

export function parseAutoEvalProblem(value: unknown, where: string): AutoEvalProblem {
  const row = record(value, where, "the row");
  const test = record(row.test, where, '"test"');
  const labels = record(row.labels ?? {}, where, '"labels"');
  if (typeof test.code !== "string") fail(where, "test.code must be the test code as a string");
  const assets =
    test.asset === undefined || test.asset === null ? {} : record(test.asset, where, "test.asset");
  for (const [name, content] of Object.entries(assets)) {
    if (typeof content !== "string") fail(where, `test.asset["${name}"] must be base64 text`);
  }
  const programmingLanguage = languageOf(labels.programming_language, where, "labels.programming_language");
  const execution = labels.execution_language;
  if (execution !== undefined && typeof execution !== "string")
    fail(where, "labels.execution_language must be a string");
  return {
    id: idOf(row, where),
    content: typeof row.content === "string" ? row.content : "",
    testCode: test.code,
    assets: assets as Record<string, string>,
    programmingLanguage,
    executionLanguage: execution ?? programmingLanguage,
  };
}

export function parseCommonOJProblem(value: unknown, where: string): CommonOJProblem {
  const row = record(value, where, "the row");
  let tests = row.test;
  if (typeof tests === "string") {
    try {
      tests = JSON.parse(tests);
    } catch (error) {
      fail(where, `"test" is a string but not JSON (${(error as Error).message})`);
    }
  }
  if (!Array.isArray(tests) || tests.length === 0)
    fail(where, '"test" must be a non-empty list of {input: {stdin}, output: {stdout}}');
  const cases = tests.map((item, i) => {
    const entry = record(item, where, `test[${i}]`);
    const input = record(entry.input, where, `test[${i}].input`);
    const output = record(entry.output, where, `test[${i}].output`);
    if (typeof input.stdin !== "string") fail(where, `test[${i}].input.stdin must be a string`);
    if (typeof output.stdout !== "string") fail(where, `test[${i}].output.stdout must be a string`);
    return { stdin: input.stdin, stdout: output.stdout };
  });
  const labels = record(row.labels ?? {}, where, '"labels"');
  const problem: CommonOJProblem = {
    id: idOf(row, where),
    content: typeof row.content === "string" ? row.content : "",
    cases,
  };
  if (labels.programming_language !== undefined) {
    problem.language = languageOf(labels.programming_language, where, "labels.programming_language");
  }
  return problem;
}

/** Problems by id; a repeated id is an error naming both lines. */
export function indexProblems<T extends { id: string }>(
  lines: readonly JsonLine[],
  parse: (value: unknown, where: string) => T,
  source: string,
): Map<string, T> {
  const problems = new Map<string, T>();
  const lineOf = new Map<string, number>();
  for (const { value, line } of lines) {
    const problem = parse(value, `${source}:${line}`);
    const earlier = lineOf.get(problem.id);
    if (earlier !== undefined) fail(`${source}:${line}`, `problem id ${problem.id} repeats line ${earlier}`);
    lineOf.set(problem.id, line);
    problems.set(problem.id, problem);
  }
  return problems;
}

/** Answers `{id, completion | code, language?, sample_id?}`; sample ids must be unique per problem. */
export function parseFusionAnswers(lines: readonly JsonLine[], source: string): FusionAnswer[] {
  const answers: FusionAnswer[] = [];
  const perProblem = new Map<string, Set<string>>();
  for (const { value, line } of lines) {
    const where = `${source}:${line}`;
    const row = record(value, where, "an answer");
    const qid = idOf(row, where);
    const samples = perProblem.get(qid) ?? new Set<string>();
    perProblem.set(qid, samples);
    const sample = row.sample_id ?? row.sample;
    const id = sample === undefined ? String(samples.size) : String(sample);
    if (samples.has(id))
      fail(where, `sample_id ${id} repeats for problem ${qid}; give each answer its own sample_id`);
    samples.add(id);
    const answer: FusionAnswer = { qid, id };
    if (typeof row.completion === "string") answer.completion = row.completion;
    else if (typeof row.code === "string") answer.code = row.code;
    else fail(where, 'an answer needs "completion" (the model\'s text) or "code"');
    if (row.language !== undefined) answer.language = languageOf(row.language, where, '"language"');
    answers.push(answer);
  }
  return answers;
}
