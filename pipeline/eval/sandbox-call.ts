// One request to the sandbox on behalf of an evaluation, and the raw record of what happened: the
// steps with their command lines, status, exit code, time and memory, and the program's output.
// BabelCode runs, AutoEval and CommonOJ all go through here so their raw results read alike.
import type { LanguageName } from "../code/languages.js";
import { findLanguage } from "../sandbox/index.js";
import type { CodeRunner, CommandRunResult, RunCodeRequest, RunCodeResponse } from "../sandbox/types.js";
import type { CommandRecord, PredictionResult } from "./types.js";

/** Limits sent with every request; unset ones fall to the sandbox's defaults. */
export interface RunLimits {
  /** seconds */
  compileTimeoutS?: number;
  /** seconds */
  runTimeoutS?: number;
  /** MiB */
  memoryMb?: number;
  /**
   * Write each step's command line from the sandbox's language table into the raw results (default
   * true). Turn it off for a remote server, whose commands the table does not know.
   */
  recordCommands?: boolean;
  signal?: AbortSignal;
}

/** What the sandbox answered, or a SandboxError response when the runner itself failed. */
export interface SandboxCall {
  request: RunCodeRequest;
  response: RunCodeResponse;
  /** wall-clock seconds for the request as the evaluator saw it */
  elapsed_s: number;
}

export function sandboxErrorResponse(message: string): RunCodeResponse {
  return { status: "SandboxError", message, compile_result: null, run_result: null, files: {} };
}

/** Sends `request` with the limits; a runner that throws (server down, sandbox closed) becomes a SandboxError. */
export async function callSandbox(
  runner: CodeRunner,
  request: RunCodeRequest,
  limits: RunLimits = {},
): Promise<SandboxCall> {
  const sent: RunCodeRequest = { ...request };
  if (limits.compileTimeoutS !== undefined) sent.compile_timeout = limits.compileTimeoutS;
  if (limits.runTimeoutS !== undefined) sent.run_timeout = limits.runTimeoutS;
  if (limits.memoryMb !== undefined) sent.memory_limit_MB = limits.memoryMb;
  const started = performance.now();
  let response: RunCodeResponse;
  try {
    response = await runner.run(sent, limits.signal ? { signal: limits.signal } : undefined);
  } catch (error) {
    if (limits.signal?.aborted) throw error;
    response = sandboxErrorResponse((error as Error).message);
  }
  return { request: sent, response, elapsed_s: Math.round(performance.now() - started) / 1000 };
}

/**
 * The compile and run command lines the sandbox's language table gives for a request. The table
 * names node and esbuild by name (the sandbox binds its own copies); the JVM and PHP heap flags
 * show the request's memory limit, or `<memory_mb>` when it left the sandbox's default in place.
 */
export function commandLines(request: RunCodeRequest): { compile: string[] | null; run: string[] } | null {
  const spec = findLanguage(request.language);
  if (!spec) return null;
  const memoryMb = request.memory_limit_MB ?? MEMORY_TOKEN;
  const ctx = {
    source: spec.sourceFile(request.code),
    code: request.code,
    memoryMb,
    nodePath: "node",
    esbuildPath: "esbuild",
  };
  const text = (argv: string[]) => argv.map((arg) => arg.replace(String(MEMORY_TOKEN), "<memory_mb>"));
  return { compile: spec.compile ? text(spec.compile(ctx)) : null, run: text(spec.run(ctx)) };
}

// A number no one asks for, so it can be found again in the rendered arguments and named.
const MEMORY_TOKEN = 987654321;

function commandRecord(
  step: CommandRecord["step"],
  result: CommandRunResult,
  command: string[] | null | undefined,
): CommandRecord {
  return {
    step,
    command: command ?? null,
    status: result.status,
    return_code: result.return_code,
    execution_time: result.execution_time,
    peak_memory_kb: result.peak_memory_kb ?? null,
  };
}

/** The raw record of one call; the caller fills in the outcome and the test results. */
export function rawResult(
  call: SandboxCall,
  who: { qid: string; id: string; language: LanguageName },
  options: { recordCommands?: boolean } = {},
): PredictionResult {
  const { request, response } = call;
  const { compile_result: compile, run_result: run } = response;
  const lines = options.recordCommands === false ? null : commandLines(request);
  const result: PredictionResult = {
    qid: who.qid,
    id: who.id,
    language: who.language,
    outcome: "Had Error",
    test_results: {},
    num_tests: 0,
    num_passed: 0,
    sandbox_status: response.status,
    commands: [],
    stdout: run?.stdout ?? "",
    stderr: run?.stderr ?? "",
    main_removed: false,
    elapsed_s: call.elapsed_s,
    code: request.code,
  };
  if (response.message) result.sandbox_message = response.message;
  if (compile) result.commands.push(commandRecord("compile", compile, lines?.compile));
  if (run) result.commands.push(commandRecord("run", run, lines?.run));
  if (compile?.stderr) result.compile_stderr = compile.stderr;
  return result;
}
