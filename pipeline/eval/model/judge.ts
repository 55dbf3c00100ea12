// Judging one solution of one task in the sandbox: judge.py (beside this file) runs the task's tests
// on the solution and prints a verdict line, which becomes pipeline/execution's `ExecutionResult`, so
// the feedback turn reads as every other stage's (traceback, input with expected and actual output,
// or "Execution timed out"). One sandbox request under one time limit, retried under
// pipeline/execution's outage policy while the sandbox fails (then SandboxOutageError).
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { definesEntryPoint } from "../../code/extract.js";
import { type ExecutionResult, executeBlock } from "../../execution/index.js";
import type { CodeRunner } from "../../sandbox/types.js";
import type { BenchmarkTask } from "./benchmarks.js";

const JUDGE_SOURCE = readFileSync(new URL("./judge.py", import.meta.url), "utf8");

/** Characters of the solution's own printing kept in the verdict (the rest is counted, not kept). */
const MAX_OUTPUT_CHARS = 8000;

export interface Judgement {
  result: ExecutionResult;
  /** the code that ran: top-level demo code dropped (the code itself when it does not parse) */
  sanitized: string;
  /** the source of the assert that failed, when one did */
  assertion?: string;
}

export interface JudgeOptions {
  runTimeoutS?: number;
  memoryMb?: number;
  signal?: AbortSignal;
}

interface Verdict {
  status: "passed" | "failed" | "error";
  sanitized: string;
  stdout: string;
  error?: string;
  input?: string;
  expected?: string;
  actual?: string;
  assertion?: string;
}

/**
 * The solution to run for a task. A HumanEval answer that only continues the function (no `def` of
 * the entry point) is appended to the prompt, as a completion would be.
 */
export function completeSolution(task: BenchmarkTask, code: string): string {
  if (task.judge.mode !== "check" || definesEntryPoint(code, task.judge.entryPoint)) return code;
  return `${task.prompt}${code}`;
}

/**
 * The Python program that judges `solution` against `task`'s tests and prints a verdict line marked
 * with the nonce it reads from stdin (never part of the program: the solution can read the program).
 */
export function judgeProgram(task: BenchmarkTask, solution: string): string {
  const judge =
    task.judge.mode === "check"
      ? { mode: "check", entry_point: task.judge.entryPoint, test: task.judge.test }
      : { mode: "script", test: task.judge.test };
  const job = {
    solution,
    prelude: task.prelude,
    setup: task.judge.mode === "script" ? task.judge.setup : "",
    judge,
    max_output: MAX_OUTPUT_CHARS,
  };
  const encoded = Buffer.from(JSON.stringify(job), "utf8").toString("base64");
  return JUDGE_SOURCE.replace("__JOB__", () => encoded);
}

function findVerdict(stdout: string, nonce: string): Verdict | undefined {
  const at = stdout.lastIndexOf(nonce);
  if (at < 0) return undefined;
  const line = stdout.slice(at + nonce.length).split("\n")[0]!;
  try {
    return JSON.parse(line) as Verdict;
  } catch {
    return undefined;
  }
}

/** Runs `code` (as extracted from an answer) against the task's tests in the sandbox. */
export async function judgeSolution(
  runner: CodeRunner,
  task: BenchmarkTask,
  code: string,
  options: JudgeOptions = {},
): Promise<Judgement> {
  const solution = completeSolution(task, code);
  const nonce = `@@verdict-${randomBytes(12).toString("hex")}@@`;
  const settings = { run_timeout_s: options.runTimeoutS, memory_mb: options.memoryMb };
  const run = await executeBlock(runner, judgeProgram(task, solution), "python", settings, {
    stdin: `${nonce}\n`,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const verdict = run.status === "success" ? findVerdict(run.stdout, nonce) : undefined;
  if (!verdict) {
    // Killed (time, memory, a flood of output cut by the sandbox), or it left before the tests
    // reported: what the sandbox saw is the result, with the judge's own output left out.
    const base: ExecutionResult = { ...run, stdout: run.stdout.split(nonce)[0]! };
    if (run.status !== "success") return { result: base, sanitized: solution };
    return {
      result: {
        ...base,
        status: "runtime-error",
        stderr: `${run.stderr}\nThe program exited before its tests finished.`.trimStart(),
      },
      sanitized: solution,
    };
  }
  const base: ExecutionResult = { ...run, stdout: verdict.stdout, stderr: "" };
  if (verdict.status === "passed") return { result: base, sanitized: verdict.sanitized };
  if (verdict.status === "failed") {
    return {
      result: {
        ...base,
        status: "wrong-output",
        mismatch: {
          input: verdict.input ?? "",
          expected: verdict.expected ?? "",
          actual: verdict.actual ?? "",
        },
      },
      sanitized: verdict.sanitized,
      ...(verdict.assertion ? { assertion: verdict.assertion } : {}),
    };
  }
  return {
    result: { ...base, status: "runtime-error", exitCode: 1, stderr: verdict.error ?? "" },
    sanitized: verdict.sanitized,
  };
}
