// What one run of a dialogue stage shares across its records: one LLM client per role, one sandbox
// gate, one execution journal. The stage's `open` makes it once per run (dialogueStage()), so two
// stages run by one command never share a gate or a client's usage.
import path from "node:path";
import { type FeedbackTemplate, KeptResults, programsAtOnce } from "../../pipeline/execution/index.js";
import type { LlmClient } from "../../pipeline/llm/types.js";
import type { StageContext } from "../../pipeline/stage.js";
import type { ExecutionConfig } from "./config.js";
import { Executor } from "./executor.js";
import type { JournaledRun } from "./journal.js";

export interface DialogueServices {
  llm(role: string): LlmClient;
  readonly executor: Executor;
  /** the runs kept per record: `journal.open(record.id)` */
  readonly journal: KeptResults<JournaledRun>;
}

export function openDialogueServices<
  C extends { execution: ExecutionConfig; feedback_template: FeedbackTemplate },
>(ctx: StageContext<C>): DialogueServices {
  const clients = new Map<string, LlmClient>();
  const { execution, feedback_template } = ctx.config;
  // made at the first record that needs them, so a run with no records sets up no sandbox
  let executor: Executor | undefined;
  let journal: KeptResults<JournaledRun> | undefined;
  return {
    llm(role) {
      if (!clients.has(role)) clients.set(role, ctx.services.llm(role, ctx.usage));
      return clients.get(role)!;
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
      journal ??= new KeptResults(path.join(ctx.workDir, "executions"));
      return journal;
    },
  };
}
