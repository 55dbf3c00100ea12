// The paper's four benchmarks as tasks: the original prompt the model sees, the canonical solution
// (for the oracle's guidance), and how the solution is judged. Rows come through the hub client,
// pinned by revision (layouts: the dataset cards, docs/eval.md); a row without the fields a task
// needs, or a file that does not parse, becomes an invalid task with its reason, never a crash.
import path from "node:path";
import { definesEntryPoint } from "../../code/extract.js";
import { HubClient } from "../../hub/client.js";
import type { HubConfig } from "../../hub/config.js";
import { downloadVerified } from "../../hub/download.js";
import type { Logger } from "../../log.js";
import { readRows } from "../../readers/index.js";
import type { BenchmarkName, BenchmarkSource } from "./config.js";

/** How a solution is judged: HumanEval's `check(candidate)`, or MBPP's asserts run as a script. */
export type TaskJudge =
  | { mode: "check"; entryPoint: string; test: string }
  | { mode: "script"; setup: string; test: string };

export interface BenchmarkTask {
  id: string;
  /** the benchmark's own prompt: what `{original prompt}` becomes */
  prompt: string;
  /** benchmark code run before the solution (HumanEval's prompt: its imports and helpers) */
  prelude: string;
  /** the function the tests call, when known: a code block that defines it is the solution */
  entryPoint: string | undefined;
  /** a complete canonical solution, for the oracle */
  canonical: string;
  judge: TaskJudge;
}

export type TaskRow = { task: BenchmarkTask } | { invalid: { id: string; reason: string } };

export interface LoadedBenchmark {
  benchmark: BenchmarkName;
  repo: string;
  commit: string;
  files: string[];
  rows: TaskRow[];
}

type Row = Record<string, unknown>;

class RowProblem extends Error {}

function text(row: Row, field: string): string {
  const value = row[field];
  if (typeof value !== "string") throw new RowProblem(`"${field}" is missing or not text`);
  return value;
}

function texts(row: Row, field: string): string[] {
  const value = row[field];
  if (!Array.isArray(value) || value.some((v) => typeof v !== "string"))
    throw new RowProblem(`"${field}" is missing or not a list of text`);
  return value as string[];
}

function idOf(row: Row): string {
  const id = row.task_id;
  if (typeof id === "string" && id !== "") return id;
  if (typeof id === "number" || typeof id === "bigint") return String(id);
  throw new RowProblem(`"task_id" is missing`);
}

/** The function an MBPP test calls that the canonical solution defines (the name the model must use). */
function calledFunction(tests: readonly string[], code: string): string | undefined {
  for (const line of tests) {
    for (const m of line.matchAll(/([A-Za-z_]\w*)\s*\(/g)) {
      if (definesEntryPoint(code, m[1]!)) return m[1]!;
    }
  }
  return undefined;
}

/** openai/openai_humaneval, evalplus/humanevalplus: `test` defines `check(candidate)`. */
function humanEvalTask(row: Row): BenchmarkTask {
  const prompt = text(row, "prompt");
  const entryPoint = text(row, "entry_point");
  if (!/^[A-Za-z_]\w*$/.test(entryPoint)) throw new RowProblem(`"entry_point" is not a function name`);
  return {
    id: idOf(row),
    prompt,
    prelude: prompt,
    entryPoint,
    canonical: prompt + text(row, "canonical_solution"),
    judge: { mode: "check", entryPoint, test: text(row, "test") },
  };
}

/** google-research-datasets/mbpp (full): `test_list` holds three `assert` lines. */
function mbppTask(row: Row): BenchmarkTask {
  const tests = texts(row, "test_list");
  if (tests.length === 0) throw new RowProblem(`"test_list" is empty`);
  const code = text(row, "code");
  const setup = row.test_setup_code;
  if (setup !== undefined && setup !== null && typeof setup !== "string")
    throw new RowProblem(`"test_setup_code" is not text`);
  return {
    id: idOf(row),
    // "the given problem and test examples": the description, then its asserts
    prompt: `${text(row, "text")}\n${tests.join("\n")}`,
    prelude: "",
    entryPoint: calledFunction(tests, code),
    canonical: code,
    judge: { mode: "script", setup: setup ?? "", test: tests.join("\n") },
  };
}

/** evalplus/mbppplus: `test` is a script calling the function on every extended input. */
function mbppPlusTask(row: Row): BenchmarkTask {
  const code = text(row, "code");
  const tests = texts(row, "test_list");
  return {
    id: idOf(row),
    prompt: text(row, "prompt"),
    prelude: "",
    entryPoint: calledFunction(tests, code),
    canonical: code,
    judge: { mode: "script", setup: texts(row, "test_imports").join("\n"), test: text(row, "test") },
  };
}

const PARSERS: Record<BenchmarkName, (row: Row) => BenchmarkTask> = {
  humaneval: humanEvalTask,
  "humaneval+": humanEvalTask,
  mbpp: mbppTask,
  "mbpp+": mbppPlusTask,
};

/** One row as a task, or the reason it cannot be one. */
export function parseTaskRow(benchmark: BenchmarkName, value: unknown, where: string): TaskRow {
  if (value === null || typeof value !== "object" || Array.isArray(value))
    return { invalid: { id: where, reason: "the row is not an object" } };
  const row = value as Row;
  try {
    return { task: PARSERS[benchmark](row) };
  } catch (error) {
    if (!(error instanceof RowProblem)) throw error;
    const id =
      typeof row.task_id === "string" || typeof row.task_id === "number" ? String(row.task_id) : where;
    return {
      invalid: { id, reason: `${error.message} (${benchmark} rows need the fields in docs/eval.md)` },
    };
  }
}

/** Every row of the local files as a task row; a file that cannot be read is one invalid row. */
export async function readTaskRows(
  benchmark: BenchmarkName,
  files: readonly string[],
  limit?: number,
): Promise<TaskRow[]> {
  const rows: TaskRow[] = [];
  for (const file of files) {
    const name = path.basename(file);
    try {
      for await (const raw of readRows(file, { maxRowBytes: 256 << 20 })) {
        if (limit !== undefined && rows.length >= limit) return rows;
        const where = `${name} row ${raw.index + 1}`;
        if (raw.error)
          rows.push({ invalid: { id: where, reason: `${raw.error.reason}: ${raw.error.detail}` } });
        else rows.push(parseTaskRow(benchmark, raw.value, where));
      }
    } catch (error) {
      rows.push({
        invalid: {
          id: name,
          reason: `the file could not be read (${(error as Error).message}); check the benchmark's files and revision in eval.model.benchmarks`,
        },
      });
    }
  }
  return rows;
}

/** Resolves, lists and downloads (verified, resumable) a benchmark's files, then reads its tasks. */
export async function loadBenchmark(
  benchmark: BenchmarkName,
  source: BenchmarkSource,
  options: { hub: HubConfig; dir: string; limit?: number; signal?: AbortSignal; log?: Logger },
): Promise<LoadedBenchmark> {
  const client = new HubClient(options.hub, { signal: options.signal, log: options.log });
  const commit = await client.resolveCommit(source.repo, source.revision);
  const listed = await client.listFiles(source.repo, commit, source.files);
  const local: string[] = [];
  for (const file of listed) {
    const dest = path.join(options.dir, ...source.repo.split("/"), commit, ...file.path.split("/"));
    const done = await downloadVerified(client, file, commit, dest, { signal: options.signal });
    if (done.fetched) options.log?.info(`fetched ${source.repo}/${file.path} at ${commit.slice(0, 12)}`);
    local.push(done.localPath);
  }
  return {
    benchmark,
    repo: source.repo,
    commit,
    files: listed.map((f) => f.path),
    rows: await readTaskRows(benchmark, local, options.limit),
  };
}
