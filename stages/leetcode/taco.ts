// TACO's rows as the hub publishes them (BAAI/TACO, config ALL): every column is text, and three of
// them hold encoded values: `solutions` is a JSON list of Python programs, `input_output` a JSON
// object `{inputs, outputs, fn_name?}`, and `tags` / `skill_types` Python list literals
// (`['Array', 'Hash Table']`). A row is a LeetCode problem when its `source` says so (see
// docs/leetcode.md); a LeetCode row that cannot be used is a reject with the reason.
import type { Reject } from "../../pipeline/record.js";

/** The tests of a problem: stdin/stdout cases, or calls of `fn_name` with argument lists. */
export type ProblemTests =
  | { style: "stdio"; inputs: string[]; outputs: string[] }
  | { style: "call"; fnName: string; inputs: unknown[][]; outputs: unknown[] };

export interface TacoProblem {
  /** `<download source>:<file stem>:<row>`, e.g. `taco:train-00000-of-00001:000042` */
  id: string;
  /** the row's `name` (LeetCode's slug) or, without one, the id */
  name: string;
  question: string;
  starterCode: string;
  solutions: string[];
  tests: ProblemTests;
  difficulty: string;
  tags: string[];
  skillTypes: string[];
  source: string;
  url: string;
  /** TACO's `Expected Time Complexity` and `Expected Auxiliary Space`, where the row gives them */
  expectedTime: string | undefined;
  expectedSpace: string | undefined;
  origin: { repo: string; file: string; row: number; commit: string };
}

export type TacoRowResult =
  | { kind: "problem"; problem: TacoProblem }
  | { kind: "other-source"; source: string }
  | { kind: "reject"; reject: Reject };

/** How a row names where it comes from: its `source` column, lower-cased, or the host of its `url`. */
export function rowSource(row: Record<string, unknown>): string {
  const source = typeof row.source === "string" ? row.source.trim().toLowerCase() : "";
  if (source) return source;
  const url = typeof row.url === "string" ? row.url : "";
  return /^https?:\/\/(?:www\.)?leetcode\.(?:com|cn)\//i.test(url) ? "leetcode" : "";
}

/**
 * Reads a Python list literal of strings (`['a', "b's"]`) as TACO writes tags; JSON lists too.
 * Undefined when it is not one.
 */
export function parseStringList(text: string): string[] | undefined {
  const s = text.trim();
  if (s === "" || s === "None") return [];
  if (!s.startsWith("[") || !s.endsWith("]")) return undefined;
  const items: string[] = [];
  let i = 1;
  const end = s.length - 1;
  const space = () => {
    while (i < end && /\s/.test(s[i]!)) i++;
  };
  space();
  while (i < end) {
    const quote = s[i];
    if (quote !== "'" && quote !== '"') return undefined;
    let item = "";
    i++;
    while (i < end && s[i] !== quote) {
      if (s[i] === "\\" && i + 1 < end) i++;
      item += s[i];
      i++;
    }
    if (s[i] !== quote) return undefined;
    i++;
    items.push(item);
    space();
    if (i < end && s[i] !== ",") return undefined;
    i++;
    space();
  }
  return items;
}

function text(row: Record<string, unknown>, key: string): string {
  const value = row[key];
  return typeof value === "string" ? value : "";
}

/** A complexity TACO gives, or undefined for the empty strings and placeholders most rows hold. */
function complexity(value: string): string | undefined {
  const v = value.trim();
  return v === "" || /^(?:none|null|n\/a|-)$/i.test(v) ? undefined : v;
}

function parseJson(value: string): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(value) };
  } catch (error) {
    return { ok: false, error: (error as Error).message };
  }
}

/** The tests of `input_output`, or what is wrong with them. */
export function parseTests(raw: string): ProblemTests | { error: string; reason: string } {
  if (raw.trim() === "") return { reason: "no-tests", error: "input_output is empty" };
  const parsed = parseJson(raw);
  if (!parsed.ok) return { reason: "bad-tests", error: `input_output is not JSON (${parsed.error})` };
  const io = parsed.value as Record<string, unknown> | null;
  if (io === null || typeof io !== "object" || Array.isArray(io))
    return { reason: "bad-tests", error: "input_output must be an object {inputs, outputs, fn_name?}" };
  const { inputs, outputs, fn_name: fnName } = io;
  if (!Array.isArray(inputs) || !Array.isArray(outputs))
    return { reason: "bad-tests", error: "input_output.inputs and .outputs must be lists" };
  if (inputs.length !== outputs.length)
    return {
      reason: "bad-tests",
      error: `input_output has ${inputs.length} inputs but ${outputs.length} outputs`,
    };
  if (inputs.length === 0) return { reason: "no-tests", error: "input_output has no test cases" };
  if (fnName !== undefined && fnName !== null && fnName !== "") {
    if (typeof fnName !== "string" || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(fnName))
      return { reason: "bad-tests", error: `fn_name ${JSON.stringify(fnName)} is not an identifier` };
    // TACO writes each call's arguments as a list; a lone value is one argument
    const args = inputs.map((input) => (Array.isArray(input) ? input : [input]));
    return { style: "call", fnName, inputs: args, outputs };
  }
  const bad = [...inputs, ...outputs].findIndex((v) => typeof v !== "string");
  if (bad >= 0)
    return {
      reason: "bad-tests",
      error: "stdin/stdout tests (no fn_name) must be strings; set fn_name for function calls",
    };
  return { style: "stdio", inputs: inputs as string[], outputs: outputs as string[] };
}

/** Reads one raw TACO row; `keep` are the `source` values wanted (e.g. `leetcode`). */
export function readTacoRow(
  value: unknown,
  where: { id: string; repo: string; file: string; row: number; commit: string },
  keep: readonly string[],
): TacoRowResult {
  const reject = (reason: string, detail: string): TacoRowResult => ({
    kind: "reject",
    reject: { id: where.id, reason, detail: `${where.file} row ${where.row}: ${detail}`, record: value },
  });
  if (value === null || typeof value !== "object" || Array.isArray(value))
    return reject("not-an-object", "a TACO row must be an object with TACO's columns");
  const row = value as Record<string, unknown>;
  const source = rowSource(row);
  if (!keep.includes(source)) return { kind: "other-source", source: source || "(none)" };
  const question = text(row, "question");
  if (question.trim() === "") return reject("no-question", "the question is empty");
  const solutionsText = text(row, "solutions");
  const solutions = parseJson(solutionsText.trim() === "" ? "[]" : solutionsText);
  if (!solutions.ok) return reject("bad-solutions", `solutions is not JSON (${solutions.error})`);
  if (!Array.isArray(solutions.value) || solutions.value.some((s) => typeof s !== "string"))
    return reject("bad-solutions", "solutions must be a JSON list of programs (strings)");
  const programs = (solutions.value as string[]).filter((s) => s.trim() !== "");
  if (programs.length === 0) return reject("no-solutions", "the row has no solution");
  const tests = parseTests(text(row, "input_output"));
  if ("error" in tests) return reject(tests.reason, tests.error);
  const tags = parseStringList(text(row, "tags"));
  const skillTypes = parseStringList(text(row, "skill_types"));
  if (tags === undefined)
    return reject("bad-tags", `tags ${JSON.stringify(text(row, "tags"))} is not a list`);
  if (skillTypes === undefined)
    return reject("bad-tags", `skill_types ${JSON.stringify(text(row, "skill_types"))} is not a list`);
  const name = text(row, "name").trim();
  return {
    kind: "problem",
    problem: {
      id: where.id,
      name: name || where.id,
      question,
      starterCode: text(row, "starter_code"),
      solutions: programs,
      tests,
      difficulty: text(row, "difficulty"),
      tags,
      skillTypes,
      source,
      url: text(row, "url"),
      expectedTime: complexity(text(row, "Expected Time Complexity")),
      expectedSpace: complexity(text(row, "Expected Auxiliary Space")),
      origin: { repo: where.repo, file: where.file, row: where.row, commit: where.commit },
    },
  };
}
