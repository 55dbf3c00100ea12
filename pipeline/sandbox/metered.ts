// A stage's face of the shared sandbox client: the same servers and limits, with what each server did
// counted in the stage's usage (and so in its manifest), as an LLM client counts in it per role, and
// every program the sandbox ran counted with its busy time where the runner says (the record being
// handled, so the count is committed with it: pipeline/usage.ts, SandboxUsage). A stage that keeps
// results to replay (an execution journal, a verdict cache) keeps each one's cost beside it
// (`alsoCountingIn`) and counts it when the result is replayed instead of run (`countReplayed`), both
// by way of kept.ts.
import type { EndpointUsageSink } from "../balance/pool.js";
import type { SandboxRunSink, SandboxUsage } from "../usage.js";
import { HttpSandboxClient } from "./client.js";
import type { CodeRunner, RunCodeRequest, RunCodeResponse } from "./types.js";

export interface SandboxMeters {
  /** per server: requests, failures, ejections, latency (remote servers only) */
  usage?: EndpointUsageSink | undefined;
  /** every program run, with its busy time and, when there are several servers, the one that ran it */
  runs?: SandboxRunSink | undefined;
}

class MeteredRunner implements CodeRunner {
  constructor(
    readonly runner: CodeRunner,
    readonly meters: SandboxMeters,
  ) {}

  async run(request: RunCodeRequest, options?: { signal?: AbortSignal }): Promise<RunCodeResponse> {
    const { runner, meters } = this;
    let server: string | undefined;
    const response =
      runner instanceof HttpSandboxClient
        ? await runner.run(request, {
            ...options,
            ...(meters.usage ? { usage: meters.usage } : {}),
            answeredBy: (name) => (server = name),
          })
        : await runner.run(request, options);
    const busyMs = programBusyMs(response);
    if (busyMs !== undefined) {
      const several = runner instanceof HttpSandboxClient && runner.endpoints.length > 1;
      meters.runs?.ran(busyMs, several ? server : undefined);
    }
    return response;
  }

  /** The shared client outlives the stage: the services close it. */
  async close(): Promise<void> {}
}

/**
 * The compile and run time the sandbox reports for a response, in whole milliseconds, or undefined
 * when it ran nothing (a refusal, an outage, an unknown language).
 */
export function programBusyMs(response: RunCodeResponse): number | undefined {
  if (response.status === "SandboxError") return undefined;
  const steps = [response.compile_result, response.run_result].filter((r) => r !== null && r !== undefined);
  if (steps.length === 0) return undefined;
  return Math.round(steps.reduce((sum, step) => sum + (step.execution_time ?? 0), 0) * 1000);
}

/** `runner`, counting what it did in `meters`; the runner itself when there is nothing to count in. */
export function meteredRunner(runner: CodeRunner, meters: SandboxMeters): CodeRunner {
  if (!meters.runs && !(meters.usage && runner instanceof HttpSandboxClient)) return runner;
  return new MeteredRunner(runner, meters);
}

/**
 * `runner`, also counting each program it runs in `program`: what one result cost, to keep with it
 * so that a later process replaying the result counts the same (`countReplayed`).
 */
export function alsoCountingIn(runner: CodeRunner, program: SandboxRunSink): CodeRunner {
  if (!(runner instanceof MeteredRunner)) return meteredRunner(runner, { runs: program });
  const outer = runner.meters.runs;
  const both: SandboxRunSink = outer
    ? {
        ran: (busyMs, endpoint) => {
          outer.ran(busyMs, endpoint);
          program.ran(busyMs, endpoint);
        },
        add: (usage) => {
          outer.add(usage);
          program.add(usage);
        },
      }
    : program;
  return new MeteredRunner(runner.runner, { ...runner.meters, runs: both });
}

/**
 * Counts, where `runner` counts its programs, the programs behind a result an earlier process ran and
 * kept, now replayed instead of run: their cost as saved then (nothing when none was saved).
 */
export function countReplayed(runner: CodeRunner, cost: SandboxUsage | undefined): void {
  if (cost && runner instanceof MeteredRunner) runner.meters.runs?.add(cost);
}
