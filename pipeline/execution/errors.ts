/** The sandbox did not run the code after every try (down, or refusing): nothing is known about the code. */
export class SandboxOutageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SandboxOutageError";
  }
}
