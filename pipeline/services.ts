// Services a stage may ask for, built lazily from the root config so a stage that needs no LLM never
// asks for an endpoint. The runner owns one Services per run and closes it at the end.
import type { RootConfig } from "./config/schema.js";
import type { CacheShard } from "./llm/cache.js";
import { createLlmService } from "./llm/index.js";
import type { LlmClient, LlmEstimator } from "./llm/types.js";
import type { Logger } from "./log.js";
import { createCodeRunner } from "./sandbox/index.js";
import { meteredRunner } from "./sandbox/metered.js";
import type { CodeRunner } from "./sandbox/types.js";
import type { SandboxRunSink, UsageMeter } from "./usage.js";

export interface Services {
  /** the client for an LLM role (scorer, weak, strong); throws NotConfiguredError with advice if unset */
  llm(role: string, usage: UsageMeter): LlmClient;
  /** `run --dry-run`: what requests to an LLM role would cost, from the config and the response cache */
  llmEstimator?(role: string): LlmEstimator;
  /** `run --dry-run` and `status`: the provider and model each LLM role resolves to, one line each */
  llmRoles?(): string[];
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
 * The services as one stage (or one record of it) sees them: its sandbox counts per server in the
 * stage's usage, as its LLM clients do (they are given the meter by the stage itself), and counts
 * each program it runs in `runs` (the runner's: the record's, committed with it, or the stage's).
 */
export function stageServices(services: Services, usage: UsageMeter, runs?: SandboxRunSink): Services {
  const metered: Services = Object.create(services);
  metered.sandbox = () => meteredRunner(services.sandbox(), { usage, runs });
  return metered;
}
