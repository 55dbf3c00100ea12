// Errors of the sandbox. Problems with a request (unknown language, missing toolchain, oversized
// request, no isolation) become a `SandboxError` response carrying the message, so a stage records
// them like any result; only transient conditions (a full queue, a closed runner) are thrown.

export type SandboxProblem =
  | "unknown_language"
  | "toolchain_missing"
  | "request_too_large"
  | "invalid_request"
  | "isolation_unavailable"
  | "internal";

/** A request the sandbox refuses; `problem` says which kind, the message says what to do. */
export class SandboxRequestError extends Error {
  readonly problem: SandboxProblem;
  constructor(problem: SandboxProblem, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.problem = problem;
  }
}

/** The bounded queue is full: retry later (the server answers 503 with Retry-After). */
export class SandboxBusyError extends Error {
  readonly retryAfterSeconds: number;
  constructor(message: string, retryAfterSeconds = 1) {
    super(message);
    this.name = new.target.name;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/**
 * The sandbox, or the machine under it, failed while running a request (the host ran out of memory
 * and took the run): no verdict on the program. Thrown, so every face answers it as its own fault (a
 * SandboxError, HTTP 500 from a server), which callers ask again.
 */
export class SandboxFaultError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** The runner was closed; no more runs are accepted. */
export class SandboxClosedError extends Error {
  constructor(message = "the code runner is closed; create a new one with createCodeRunner()") {
    super(message);
    this.name = new.target.name;
  }
}

/** A remote /run_code server failed or answered something that is not a SandboxFusion response. */
export class SandboxRemoteError extends Error {
  readonly status: number | null;
  readonly url: string;
  constructor(message: string, url: string, status: number | null, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.status = status;
    this.url = url;
  }
}
