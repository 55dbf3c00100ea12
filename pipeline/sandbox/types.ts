// Request and response shapes of SandboxFusion's POST /run_code, so its clients work unchanged,
// plus our own extras (peak memory, signal, truncation). Every face of the sandbox speaks these.
import type { SandboxProblem } from "./errors.js";

export type RunStatus = "Success" | "Failed" | "SandboxError";
export type CommandStatus = "Finished" | "Error" | "TimeLimitExceeded";

export interface RunCodeRequest {
  code: string;
  /** SandboxFusion language id: python, cpp, nodejs, go, java, php, csharp, bash, typescript, rust, ... */
  language: string;
  /** seconds */
  compile_timeout?: number;
  /** seconds */
  run_timeout?: number;
  memory_limit_MB?: number;
  stdin?: string | null;
  /** path inside the work dir -> base64 content */
  files?: Record<string, string | null>;
  fetch_files?: string[];
}

export interface CommandRunResult {
  status: CommandStatus;
  /** seconds */
  execution_time: number | null;
  return_code: number | null;
  stdout: string | null;
  stderr: string | null;
  // extras
  peak_memory_kb?: number | null;
  signal?: string | null;
  stdout_truncated?: boolean;
  stderr_truncated?: boolean;
  /**
   * What the sandbox itself saw it stop or deny, whatever the program then did with the error (a
   * probe that swallows them exits 0): `memory` (the kernel killed it at the memory cap), `processes`
   * (a fork refused at the process cap), `output` (killed for too much output), `network` (its
   * network namespace refused a packet: no route, or a name lookup with no resolver).
   */
  stopped_by?: SandboxStop[];
}

/** A limit the sandbox enforced on a run; pipeline/execution adds what only the output tells. */
export type SandboxStop = "memory" | "processes" | "output" | "network" | "write-denied";

export interface RunCodeResponse {
  status: RunStatus;
  message: string;
  compile_result: CommandRunResult | null;
  run_result: CommandRunResult | null;
  executor_pod_name?: string | null;
  /**
   * With a SandboxError: which kind of refusal (a missing toolchain is not an outage and no retry
   * helps). Our servers send it; SandboxFusion's clients ignore the extra key, and its servers lack it.
   */
  problem?: SandboxProblem;
  /** fetched files: path -> base64 */
  files: Record<string, string>;
}

/** What every stage and the evaluator call; implemented by the embedded sandbox and the HTTP client. */
export interface CodeRunner {
  run(request: RunCodeRequest, options?: { signal?: AbortSignal }): Promise<RunCodeResponse>;
  close(): Promise<void>;
  /** whether a new run would be refused now: a server then answers 503 before reading the body */
  saturated?(): boolean;
  /** the runs it takes at once, which a server says on its health path */
  stats?(): { workers: number };
}
