// What one run of a dialogue stage shares across its records: one LLM client per role, one sandbox
// gate, one execution journal. The stage's `open` makes it once per run (dialogueStage()), so two
// stages run by one command never share a gate or a client's usage.
import path from "node:path";
import { type FeedbackTemplate, programsAtOnce } from "../../pipeline/execution/index.js";
import type { LlmClient } from "../../pipeline/llm/types.js";
import type { StageContext } from "../../pipeline/stage.js";
import type { ExecutionConfig } from "./config.js";
import { Executor } from "./executor.js";
import { ExecutionJournal } from "./journal.js";

export interface DialogueServices {
  llm(role: string): LlmClient;
  readonly executor: Executor;
  readonly journal: ExecutionJournal;
  /**
   * The same services for one record: its executor runs programs through the record's sandbox face
   * (`ctx.services.sandbox()` of the record's ctx), so the runner commits their count with it.
   */
  forRecord(ctx: StageContext<unknown>): DialogueServices;
}

export function openDialogueServices<
  C extends { execution: ExecutionConfig; feedback_template: FeedbackTemplate },
>(ctx: StageContext<C>): DialogueServices {
  const clients = new Map<string, LlmClient>();
  const { execution, feedback_template } = ctx.config;
  // made at the first record that needs them, so a run with no records sets up no sandbox
  let executor: Executor | undefined;
  let journal: ExecutionJournal | undefined;
  const services: DialogueServices = {
    llm(role) {
      let client = clients.get(role);
      if (!client) {
        client = ctx.services.llm(role, ctx.usage);
        clients.set(role, client);
      }
      return client;
    },
    get executor() {
      executor ??= new Executor(
        ctx.services.sandbox(),
        programsAtOnce(execution.concurrency, ctx.root),
        execution,
        feedback_template,
        ctx.signal,
      );
      return executor;
    },
    get journal() {
      journal ??= new ExecutionJournal(path.join(ctx.workDir, "executions"));
      return journal;
    },
    forRecord(recordCtx) {
      let own: Executor | undefined;
      // no spread: it would read the getters, and make the sandbox before a record needs it
      return {
        llm: services.llm,
        get journal() {
          return services.journal;
        },
        get executor() {
          own ??= services.executor.using(recordCtx.services.sandbox());
          return own;
        },
        forRecord: services.forRecord,
      };
    },
  };
  return services;
}
