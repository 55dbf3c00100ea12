// Runs the code of a dialogue in the sandbox, for simulate and correct alike: at most `concurrency`
// programs at once across every dialogue in flight (the LLM roles have their own limits), under
// pipeline/execution's outage policy (the record fails and is retried on the next run; it is never the
// code's fault), and every result is kept in the record's journal before it is used.

import pLimit, { type LimitFunction } from "p-limit";
import type { LanguageName } from "../../pipeline/code/index.js";
import {
  type CodeRunner,
  type ExecutionResult,
  executeBlock,
  executionFeedback,
  type FeedbackTemplate,
  resultKey,
  type SandboxSettings,
} from "../../pipeline/execution/index.js";
import type { JournaledRun, RecordJournal } from "./journal.js";
import { DialogueRejected } from "./outcome.js";

export interface Program {
  code: string;
  lang: LanguageName;
  /** earlier Python cells of the same session (notebook-style) */
  previous?: readonly string[];
  /** what came before the run in the dialogue (the conversation): part of the journal key */
  context: unknown;
}

export class Executor {
  private readonly gate: LimitFunction;

  /** `concurrency`: programs at once */
  constructor(
    private readonly runner: CodeRunner,
    concurrency: number,
    private readonly settings: SandboxSettings,
    private readonly template: FeedbackTemplate,
    private readonly signal?: AbortSignal,
  ) {
    this.gate = pLimit(concurrency);
  }

  async run(journal: RecordJournal, program: Program): Promise<JournaledRun> {
    const { run_timeout_s, compile_timeout_s, memory_mb } = this.settings;
    const key = resultKey([
      program.context,
      program.lang,
      program.code,
      program.previous ?? [],
      run_timeout_s,
      compile_timeout_s,
      memory_mb ?? null,
      this.template,
    ]);
    // a run an earlier process journaled (killed before the record was committed, or a forced rerun's
    // predecessor) is replayed, not run again
    const known = journal.get(key);
    if (known) return known;
    const run = journaled(await this.attempt(program), this.template);
    journal.put(key, run);
    return run;
  }

  private async attempt(program: Program): Promise<ExecutionResult> {
    const result = await executeBlock(this.runner, program.code, program.lang, this.settings, {
      previous: program.previous ?? [],
      gate: this.gate,
      ...(this.signal ? { signal: this.signal } : {}),
    });
    // not journaled: once the toolchain is installed, the next run gets a real result
    if (result.status === "language-unavailable") {
      throw new DialogueRejected("language-unavailable", `${program.lang}: ${result.message}`);
    }
    return result;
  }
}

function journaled(result: ExecutionResult, template: FeedbackTemplate): JournaledRun {
  const errorText = result.stderr.trim() !== "" ? result.stderr : result.stdout;
  return {
    status: result.status,
    exitCode: result.exitCode,
    signal: result.signal,
    timeS: result.timeS,
    truncated: result.truncated,
    ...(result.message !== undefined ? { message: result.message } : {}),
    feedback: executionFeedback(result, template),
    errorTail: errorText.slice(-2000),
  };
}
