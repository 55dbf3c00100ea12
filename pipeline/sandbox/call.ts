// One request to the sandbox and what came of it: the request as sent (with the caller's limits), the
// answer, and the time it took as the caller saw it. Every way from a stage or an evaluation to the
// sandbox ends here, so a runner that throws (server down, sandbox closed) reads the same everywhere:
// a SandboxError response, unless the caller itself gave up.
import { UserError } from "../errors.js";
import { findLanguage } from "./languages.js";
import { sandboxErrorResponse } from "./request.js";
import type { CodeRunner, RunCodeRequest, RunCodeResponse } from "./types.js";

/** Limits sent with every request; unset ones fall to the sandbox's defaults. */
export interface CallLimits {
  /** seconds */
  compileTimeoutS?: number;
  /** seconds */
  runTimeoutS?: number;
  /** MiB */
  memoryMb?: number;
  signal?: AbortSignal;
}

/** What the sandbox answered, or a SandboxError response when the runner itself failed. */
export interface SandboxCall {
  request: RunCodeRequest;
  response: RunCodeResponse;
  /** wall-clock seconds for the request as the caller saw it */
  elapsed_s: number;
}

/** Sends `request` with the limits; a runner that throws (server down, sandbox closed) becomes a SandboxError. */
export async function callSandbox(
  runner: CodeRunner,
  request: RunCodeRequest,
  limits: CallLimits = {},
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
    // a stop of the run (no server ever answered) is no answer about this program
    if (limits.signal?.aborted || error instanceof UserError) throw error;
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
    csharpEntry: "csharp-entry.cs",
    jestPreload: "jest-preload.cjs",
    goCache: "go-cache",
  };
  const text = (argv: string[]) => argv.map((arg) => arg.replace(String(MEMORY_TOKEN), "<memory_mb>"));
  return { compile: spec.compile ? text(spec.compile(ctx)) : null, run: text(spec.run(ctx)) };
}

// A number no one asks for, so it can be found again in the rendered arguments and named.
const MEMORY_TOKEN = 987654321;
