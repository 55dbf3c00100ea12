// Services a stage may ask for, built lazily from the root config so a stage that needs no LLM never
// asks for an endpoint. The runner owns one Services per run and closes it at the end.
import type { RootConfig } from "./config/schema.js";
import type { LlmBatches } from "./llm/batch/rounds.js";
import type { CacheShard } from "./llm/cache.js";
import { createLlmService } from "./llm/index.js";
import type { LlmClient, LlmEstimator } from "./llm/types.js";
import type { Logger } from "./log.js";
import { createCodeRunner, HttpSandboxClient } from "./sandbox/index.js";
import type { CodeRunner, RunCodeResponse } from "./sandbox/types.js";
import type { UsageMeter } from "./usage.js";

export interface Services {
  /** the client for an LLM role (scorer, weak, strong); throws NotConfiguredError with advice if unset */
  llm(role: string, usage: UsageMeter): LlmClient;
  /** `run --dry-run`: what requests to an LLM role would cost, from the config and the response cache */
  llmEstimator?(role: string): LlmEstimator;
  /** `run --dry-run` and `status`: the provider and model each LLM role resolves to, one line each */
  llmRoles?(): string[];
  /** the batch rounds of the LLM roles in batch mode; undefined when every role is online */
  llmBatches?(): LlmBatches | undefined;
  /** the code sandbox (embedded or remote /run_code servers), shared by every stage of the run */
  sandbox(): CodeRunner;
  close(): Promise<void>;
}

export interface ServiceOptions {
  dataDir: string;
  /** `--no-cache`: ask the LLM again even when the response cache has an answer */
  noCache?: boolean;
  log: Logger;
  /** `run --shard K/N`: LLM answers go to a cache file of the shard's own */
  shard?: CacheShard;
  /** `run --no-wait`: batch roles submit their rounds and return instead of waiting for them */
  noWait?: boolean;
}

export function createServices(root: RootConfig, options: ServiceOptions): Services {
  let llm: ReturnType<typeof createLlmService> | undefined;
  let sandbox: CodeRunner | undefined;
  const llmService = () =>
    (llm ??= createLlmService(root.llm, {
      dataDir: options.dataDir,
      noCache: options.noCache ?? false,
      log: options.log,
      hub: root.hub,
      ...(options.shard ? { shard: options.shard } : {}),
      ...(options.noWait ? { noWait: true } : {}),
    }));
  return {
    llm(role, usage) {
      return llmService().client(role, usage);
    },
    llmEstimator(role) {
      return llmService().estimator(role);
    },
    llmRoles() {
      return llmService().describeRoles();
    },
    llmBatches() {
      return llmService().batches();
    },
    sandbox() {
      sandbox ??= createCodeRunner(root.sandbox);
      return sandbox;
    },
    async close() {
      await Promise.all([llm?.close(), sandbox?.close()]);
    },
  };
}

/**
 * The services as one stage sees them: its sandbox counts in the stage's usage what each server did
 * and every program it ran, as its LLM clients count their requests (given the meter by the stage).
 */
export function stageServices(services: Services, usage: UsageMeter): Services {
  const metered: Services = Object.create(services);
  metered.sandbox = () => {
    const runner = services.sandbox();
    const several = runner instanceof HttpSandboxClient && runner.endpoints.length > 1;
    return {
      async run(request, options) {
        let server: string | undefined;
        const response =
          runner instanceof HttpSandboxClient
            ? await runner.run(request, { ...options, usage, answeredBy: (name) => (server = name) })
            : await runner.run(request, options);
        const busyMs = programBusyMs(response);
        if (busyMs !== undefined) usage.ran(busyMs, several ? server : undefined);
        return response;
      },
      // the shared client outlives the stage: the services close it
      async close() {},
    };
  };
  return metered;
}

/** The compile and run time the sandbox reports, in whole ms; undefined when it ran nothing. */
function programBusyMs(response: RunCodeResponse): number | undefined {
  if (response.status === "SandboxError") return undefined;
  const steps = [response.compile_result, response.run_result].filter((r) => r !== null && r !== undefined);
  if (steps.length === 0) return undefined;
  return Math.round(steps.reduce((sum, step) => sum + (step.execution_time ?? 0), 0) * 1000);
}
