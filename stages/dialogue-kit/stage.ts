// What every dialogue stage built on filtered queries shares, so a new one is its paper paragraph and
// a handful of declarations: it reads the filter's records the selection takes, is a dialogue method
// (`enabled: false` leaves it out and validate and export go on without it), keeps twice its lead
// role's requests in flight plus the programs the sandbox runs at once, rejects a record without a
// query, and estimates a dry run from its plan of requests.
import type { z } from "zod";
import type { DialogueMethod } from "../../pipeline/dialogue.js";
import { learnServerWorkers, programsAtOnce } from "../../pipeline/execution/index.js";
import { roleConfig } from "../../pipeline/llm/config.js";
import { loadPrompt } from "../../pipeline/llm/prompts.js";
import type { PipelineRecord, RecordOutcome } from "../../pipeline/record.js";
import { outputsStep } from "../../pipeline/report/flow.js";
import { defineStage, type RecordStage, type Stage, type StageContext } from "../../pipeline/stage.js";
import type { DialogueStageConfig } from "./config.js";
import { type DialoguePlan, estimateDialogues } from "./estimate.js";
import { sampleOptions } from "./sample.js";
import { type DialogueServices, openDialogueServices } from "./services.js";

export interface DialogueStageSpec<C extends DialogueStageConfig, Sum extends object> {
  name: string;
  description: string;
  /** the dialogue methods it makes (pipeline/registry.ts) */
  methods: readonly DialogueMethod[];
  configSchema: z.ZodType<C>;
  /** the role most requests go to: its endpoint's concurrency sets the records in flight */
  leadRole(config: C): string;
  fingerprint: NonNullable<Stage<C>["fingerprint"]>;
  /** one record to its dialogue or its reject; called only for a record with a query */
  process(
    record: PipelineRecord & { query: string },
    ctx: StageContext<C>,
    services: DialogueServices,
  ): Promise<RecordOutcome>;
  /**
   * The dry run's requests per dialogue (estimate.ts); the first is `firstRole` asked the query under
   * the `systemPrompt` (a name in prompts/).
   */
  plan(config: C): Omit<DialoguePlan, "first" | "completionTokens"> & {
    systemPrompt: string;
    /** the assumed length of an answer; default 400 */
    completionTokens?: number;
  };
  summarize: NonNullable<Stage<C, DialogueServices, Sum>["summarize"]>;
  /** the shape of its summary, which spreads a DialogueTally of its methods */
  summarySchema: z.ZodType<Sum>;
}

/** The stage definition of a dialogue method reading the filter's records. */
export function dialogueStage<C extends DialogueStageConfig, Sum extends object>(
  spec: DialogueStageSpec<C, Sum>,
): RecordStage<C, unknown, Sum> {
  return defineStage<C, DialogueServices, Sum>({
    kind: "record",
    name: spec.name,
    description: spec.description,
    methods: spec.methods,
    upstream: ["filter"],
    switchable: true,
    configSchema: spec.configSchema,
    fingerprint: spec.fingerprint,
    input: (ctx) => ctx.sample("filter", sampleOptions(ctx.config)).records(),
    inputSize: (ctx) => ctx.sample("filter", sampleOptions(ctx.config)).size(),
    concurrency: (ctx) =>
      ctx.config.concurrency ??
      2 * (roleConfig(ctx.root.llm, spec.leadRole(ctx.config))?.concurrency ?? 16) +
        programsAtOnce(ctx.config.execution.concurrency, ctx.root),
    // the clients, sandbox gate and journal the records of one run share; with sandbox.url and no
    // workers, the servers say theirs first (the records in flight above count the programs at once)
    open: async (ctx) => {
      if (ctx.config.execution.concurrency === undefined) await learnServerWorkers(ctx.root.sandbox, ctx.log);
      return openDialogueServices(ctx);
    },
    process: async (record, ctx, services) => {
      const query = record.query;
      if (typeof query === "string" && query.trim() !== "")
        return spec.process(record as PipelineRecord & { query: string }, ctx, services);
      const detail = "the record has no query text";
      return { rejects: [{ id: record.id, reason: "empty-query", detail, record }] };
    },
    estimate: (ctx, input) => {
      const { systemPrompt, ...plan } = spec.plan(ctx.config);
      const system = loadPrompt(systemPrompt).render({});
      return estimateDialogues(ctx as StageContext<unknown>, input, {
        completionTokens: 400,
        ...plan,
        first: (record) => [
          { role: "system", content: system },
          { role: "user", content: String(record.query ?? "") },
        ],
      });
    },
    summarize: spec.summarize,
    summarySchema: spec.summarySchema,
    // its dialogues in the report's flow chart, and per method in validate's methods section
    report: {
      flow: outputsStep(`${spec.name} dialogues`),
    },
  }) as RecordStage<C, unknown, Sum>;
}
