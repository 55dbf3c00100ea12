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

/** An error named after its class. */
class NamedError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A request the sandbox refuses; `problem` says which kind, the message says what to do. */
export class SandboxRequestError extends NamedError {
  constructor(
    readonly problem: SandboxProblem,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The bounded queue is full: retry later (the server answers 503 with Retry-After). */
export class SandboxBusyError extends NamedError {}

/**
 * The sandbox, or the machine under it, failed while running a request (the host ran out of memory
 * and took the run): no verdict on the program. Thrown, so every face answers it as its own fault (a
 * SandboxError, HTTP 500 from a server), which callers ask again.
 */
export class SandboxFaultError extends NamedError {}

/** The runner was closed; no more runs are accepted. */
export class SandboxClosedError extends NamedError {
  constructor(message = "the code runner is closed; create a new one with createCodeRunner()") {
    super(message);
  }
}

/** A remote /run_code server failed or answered something that is not a SandboxFusion response. */
export class SandboxRemoteError extends NamedError {
  constructor(
    message: string,
    readonly url: string,
    readonly status: number | null,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
