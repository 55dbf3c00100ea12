// A stage's face of the shared sandbox client: the same servers and limits, with what each server did
// counted in the stage's usage (and so in its manifest), as an LLM client counts in it per role.
import type { EndpointUsageSink } from "../balance/pool.js";
import { HttpSandboxClient } from "./client.js";
import type { CodeRunner, RunCodeRequest, RunCodeResponse } from "./types.js";

class MeteredRunner implements CodeRunner {
  constructor(
    private readonly client: HttpSandboxClient,
    private readonly usage: EndpointUsageSink,
  ) {}

  run(request: RunCodeRequest, options?: { signal?: AbortSignal }): Promise<RunCodeResponse> {
    return this.client.run(request, { ...options, usage: this.usage });
  }

  /** The shared client outlives the stage: the services close it. */
  async close(): Promise<void> {}
}

/** `runner`, counting per server in `usage` when it is a remote client (the embedded one has none). */
export function meteredRunner(runner: CodeRunner, usage: EndpointUsageSink | undefined): CodeRunner {
  if (!usage || !(runner instanceof HttpSandboxClient)) return runner;
  return new MeteredRunner(runner, usage);
}
