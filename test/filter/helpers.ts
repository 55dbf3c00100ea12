// A StageContext for calling the filter stage's functions directly, with a real LLM service against
// the test server and upstream records held in memory.
import type { LlmConfig } from "../../pipeline/llm/config.js";
import { createLlmService, type LlmService } from "../../pipeline/llm/index.js";
import type { PipelineRecord, RecordOutcome, Reject } from "../../pipeline/record.js";
import { StageRegistry } from "../../pipeline/registry.js";
import type { StageContext } from "../../pipeline/stage.js";
import { UsageMeter } from "../../pipeline/usage.js";
import { type FilterConfig, filterConfigSchema } from "../../stages/filter/config.js";
import { filterRecord, openFilter } from "../../stages/filter.js";
import { recordingLogger, testConfig } from "../llm/helpers.js";
import type { ReceivedRequest, Reply } from "../support/llm-server.js";

export interface FakeRun {
  ctx: StageContext<FilterConfig>;
  service: LlmService;
  usage: UsageMeter;
  log: ReturnType<typeof recordingLogger>;
  /** what the stage committed, by input id */
  outcomes: Map<string, RecordOutcome>;
  /** runs `process` over the input (or the given records), `concurrency` at a time */
  processAll(records?: PipelineRecord[], concurrency?: number): Promise<void>;
  close(): Promise<void>;
}

export function record(id: string, query: string, extra: Partial<PipelineRecord> = {}): PipelineRecord {
  return { id, query, answer: `answer of ${id}`, resource: "evolinstruct", lang: "python", ...extra };
}

/** The LLM tests' scorer (test/llm/helpers.ts) as the filter's: `test-scorer`, 1 s time-out. */
export function llmConfig(url: string | undefined, scorer: Record<string, unknown> = {}): LlmConfig {
  return testConfig(url, { model: "test-scorer", timeout_s: 1, ...scorer });
}

export function fakeRun(options: {
  dataDir: string;
  llm: LlmConfig;
  filter?: Record<string, unknown>;
  input: PipelineRecord[];
  noCache?: boolean;
  signal?: AbortSignal;
}): FakeRun {
  const log = recordingLogger();
  const service = createLlmService(options.llm, {
    dataDir: options.dataDir,
    noCache: options.noCache ?? false,
    log,
    env: {},
  });
  const usage = new UsageMeter();
  const outcomes = new Map<string, RecordOutcome>();
  const config = filterConfigSchema.parse(options.filter ?? {});
  const ctx: StageContext<FilterConfig> = {
    name: "filter",
    config,
    root: {
      data_dir: options.dataDir,
      llm: options.llm,
      stages: {},
    } as unknown as StageContext<FilterConfig>["root"],
    dataDir: options.dataDir,
    workDir: `${options.dataDir}/filter/work`,
    limit: undefined,
    signal: options.signal ?? new AbortController().signal,
    log,
    services: {
      llm: (role, meter) => service.client(role, meter),
      llmEstimator: (role) => service.estimator(role),
      sandbox: () => {
        throw new Error("the filter needs no sandbox");
      },
      close: () => service.close(),
    },
    usage,
    async *read(stage, opts) {
      if (stage === "dedup") {
        yield* options.input;
        return;
      }
      for (const outcome of outcomes.values()) {
        const items: (PipelineRecord | Reject)[] = (opts?.rejects ? outcome.rejects : outcome.out) ?? [];
        for (const item of items) yield item as PipelineRecord;
      }
    },
    sample: () => {
      throw new Error("the filter takes no sample");
    },
    countOf: (stage) => (stage === "dedup" ? options.input.length : undefined),
    registry: new StageRegistry([]),
    // filter counts nothing through ctx.stat: its figures come from its outcomes (summarize)
    stat: () => undefined,
  };
  const run = openFilter(ctx);
  return {
    ctx,
    service,
    usage,
    log,
    outcomes,
    async processAll(records = options.input, concurrency = 8) {
      const queue = [...records];
      const worker = async () => {
        for (let next = queue.shift(); next; next = queue.shift()) {
          outcomes.set(next.id, await filterRecord(next, ctx, run));
        }
      };
      await Promise.all(Array.from({ length: concurrency }, worker));
    },
    close: () => service.close(),
  };
}

/** How the fake scorer answers each query: by round, and after the reminder. */
export interface Script {
  r1: string;
  r2?: string;
  r1again?: string;
  r2again?: string;
}

export function scripted(scripts: Record<string, Script>): (request: ReceivedRequest) => Reply {
  return (request) => {
    const messages = request.body.messages;
    const prompt = messages[0]!.content;
    const tag = Object.keys(scripts).find((t) => prompt.includes(`[${t}]`));
    if (!tag) return "Score: 1";
    const script = scripts[tag]!;
    const round2 = prompt.includes("Expert Level");
    const again = messages.length > 1;
    if (round2) return (again ? script.r2again : script.r2) ?? "Score: 1";
    return (again ? script.r1again : script.r1) ?? "Score: 1";
  };
}
