// The one error a stage sees when the sandbox is down: every way to the sandbox (pipeline/execution)
// throws it after its tries, and every stage turns it into a failed record that the next run retries.
// A missing language is no outage: it is the `language-unavailable` status of a result.

/** The sandbox did not run the code after every try (down, or refusing): nothing is known about the code. */
export class SandboxOutageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SandboxOutageError";
  }
}
