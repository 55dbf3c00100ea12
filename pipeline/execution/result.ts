// What running one piece of model code in the sandbox came to, in the words the paper uses for its
// execution feedback: it ran (with or without output), it raised an exception or failed to compile,
// its output was not what a test expected, it timed out; or the sandbox itself failed, which says
// nothing about the code. simulate, correct, validate and `eval model` all classify runs through here.
import type { LanguageName } from "../code/languages.js";
import type { SandboxProblem } from "../sandbox/errors.js";
import type { CommandRunResult, RunCodeResponse, SandboxStop } from "../sandbox/types.js";

export type ExecutionStatus =
  /** ran to the end with exit code 0 (and, where a test exists, the expected output) */
  | "success"
  | "compile-error"
  | "runtime-error"
  | "timeout"
  /** ran cleanly, but a test's expected output differs from the actual one */
  | "wrong-output"
  /** the sandbox has no toolchain for the language (the sandbox says so): no retry will change that */
  | "language-unavailable"
  /** the sandbox could not run it (outage, refused request): not the code's fault */
  | "sandbox-error";

export interface OutputMismatch {
  /** the test's input (stdin or the call), when there is one */
  input?: string;
  expected: string;
  actual: string;
}

export interface ExecutionResult {
  status: ExecutionStatus;
  language: LanguageName;
  /** exit code of the failing step (compile or run), null when it was killed or never ran */
  exitCode: number | null;
  signal: string | null;
  /** seconds the run step took (compile excluded), null when it never ran */
  timeS: number | null;
  /** the run's standard output and error (compile diagnostics for a compile error) */
  stdout: string;
  stderr: string;
  /** output was cut by the sandbox's cap */
  truncated: boolean;
  /** peak memory of the step the streams come from, in KiB, where the sandbox measured it */
  peakMemoryKb?: number;
  /** set for `wrong-output` */
  mismatch?: OutputMismatch;
  /** the sandbox's message for `sandbox-error`, or which step timed out */
  message?: string;
  /**
   * A limit the sandbox enforced on the run, whatever the status: such code is no training data even
   * when it exits 0 (a probe that swallows its errors). From the sandbox's own report where it has
   * one (memory, processes, output); network and writes outside the work dir only show as the errno
   * the program got, so a clean run's output is read for those.
   */
  stopped?: SandboxStop;
}

// The errno texts a refused connection, name lookup or write shows in every runtime's messages. The
// sandbox's network namespace and read-only mounts refuse them without telling anyone but the program.
const NETWORK_REFUSED =
  /Network is unreachable|ENETUNREACH|Temporary failure in name resolution|Name or service not known|EAI_AGAIN|getaddrinfo ENOTFOUND|No address associated with hostname|Could not resolve host/;
const WRITE_DENIED = /Read-only file system|EROFS/;
// a process's own address-space limit refuses an allocation without the kernel's counters noticing
const MEMORY_REFUSED = /\bMemoryError\b|Cannot allocate memory|ENOMEM|std::bad_alloc|heap out of memory/;

/** True for outcomes that count as the code working. */
export function passed(result: Pick<ExecutionResult, "status">): boolean {
  return result.status === "success";
}

/** The execution outcome of one sandbox answer, before any output comparison. */
export function classifyResponse(response: RunCodeResponse, language: LanguageName): ExecutionResult {
  const result = classifyStatus(response, language);
  const stopped = stoppedBy(response, result);
  return stopped ? { ...result, stopped } : result;
}

/** What the sandbox stopped or denied in a run, from its report, then from a clean run's output. */
function stoppedBy(response: RunCodeResponse, result: ExecutionResult): SandboxStop | undefined {
  const reported = response.compile_result?.stopped_by?.[0] ?? response.run_result?.stopped_by?.[0];
  if (reported || result.status !== "success") return reported;
  const text = `${result.stdout}\n${result.stderr}`;
  if (NETWORK_REFUSED.test(text)) return "network";
  if (WRITE_DENIED.test(text)) return "write-denied";
  if (MEMORY_REFUSED.test(text)) return "memory";
  return undefined;
}

// The sandbox's typed refusals that mean "not here", as opposed to "not now".
const LANGUAGE_MISSING = new Set<SandboxProblem>(["unknown_language", "toolchain_missing"]);

/** The sandbox answered that it has no such language or no toolchain for it: no retry changes that. */
export function languageRefused(response: RunCodeResponse): boolean {
  return response.status === "SandboxError" && LANGUAGE_MISSING.has(response.problem ?? "internal");
}

function classifyStatus(response: RunCodeResponse, language: LanguageName): ExecutionResult {
  const compile = response.compile_result;
  const run = response.run_result;
  const base = {
    language,
    exitCode: null,
    signal: null,
    timeS: run?.execution_time ?? null,
    stdout: run?.stdout ?? "",
    stderr: run?.stderr ?? "",
    truncated: Boolean(run?.stdout_truncated || run?.stderr_truncated),
    ...memoryOf(run),
  };
  if (response.status === "SandboxError") {
    return {
      ...base,
      status: languageRefused(response) ? "language-unavailable" : "sandbox-error",
      message: response.message || "the sandbox could not run the code",
    };
  }
  if (compile && compile.status === "TimeLimitExceeded") {
    return { ...base, status: "timeout", message: "compilation timed out" };
  }
  if (compile && (compile.status !== "Finished" || compile.return_code !== 0)) {
    return {
      ...base,
      status: "compile-error",
      exitCode: compile.return_code,
      signal: compile.signal ?? null,
      timeS: null,
      stdout: compile.stdout ?? "",
      stderr: compile.stderr ?? "",
      truncated: Boolean(compile.stdout_truncated || compile.stderr_truncated),
      // a failed compile runs nothing: its own measure is the one there is
      ...memoryOf(compile),
    };
  }
  if (!run) {
    return {
      ...base,
      status: "sandbox-error",
      message: response.message || "the sandbox returned no run result",
    };
  }
  if (run.status === "TimeLimitExceeded")
    return { ...base, status: "timeout", message: "execution timed out" };
  if (run.status !== "Finished" || run.return_code !== 0) {
    return { ...base, status: "runtime-error", exitCode: run.return_code, signal: run.signal ?? null };
  }
  return { ...base, status: "success", exitCode: 0 };
}

function memoryOf(step: CommandRunResult | null): { peakMemoryKb?: number } {
  const kb = step?.peak_memory_kb;
  return typeof kb === "number" ? { peakMemoryKb: kb } : {};
}

/** Marks a clean run whose output differs from a test's expectation as `wrong-output`. */
export function withExpectedOutput(
  result: ExecutionResult,
  test: { input?: string; expected: string },
  matches: (actual: string, expected: string) => boolean = sameOutput,
): ExecutionResult {
  if (result.status !== "success" || matches(result.stdout, test.expected)) return result;
  const mismatch: OutputMismatch = { expected: test.expected, actual: result.stdout };
  if (test.input !== undefined) mismatch.input = test.input;
  return { ...result, status: "wrong-output", mismatch };
}

/** Output equality as judges usually mean it: trailing whitespace of each line and trailing blank lines ignored. */
export function sameOutput(actual: string, expected: string): boolean {
  const norm = (s: string) =>
    s
      .replace(/\r\n?/g, "\n")
      .split("\n")
      .map((line) => line.trimEnd())
      .join("\n")
      .replace(/\n+$/, "");
  return norm(actual) === norm(expected);
}
