// Errors a user can hit. Each one says what went wrong, where, and what to do; the CLI prints the
// message without a stack trace and exits with `exitCode`.

export class UserError extends Error {
  readonly exitCode: number;
  constructor(message: string, options?: { cause?: unknown; exitCode?: number }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.exitCode = options?.exitCode ?? 2;
  }
}

/** The configuration is invalid: names the file and the key. */
export class ConfigError extends UserError {}

/** A stage needs something that is not configured (e.g. an LLM endpoint) and cannot go on. */
export class NotConfiguredError extends UserError {}

/** The run was interrupted (SIGINT/SIGTERM) after flushing; rerunning resumes. */
export class InterruptedError extends UserError {
  constructor(message: string) {
    super(message, { exitCode: 130 });
  }
}

/**
 * A service the run needs (the hub, a sandbox server) cannot be reached or keeps answering with
 * errors. Not the user's usage (2) nor a record's failure (1): nothing is wrong with the command, so
 * rerunning it once the service is back continues where it stopped.
 */
export class OperationalError extends UserError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, { ...options, exitCode: 4 });
  }
}

/**
 * `text` without its closing full stop, for quoting one message inside another sentence: "... is
 * right.. Check the sandbox" is what quoting a whole sentence gave.
 */
export function clause(text: string): string {
  return text.trimEnd().replace(/\.+$/, "");
}
