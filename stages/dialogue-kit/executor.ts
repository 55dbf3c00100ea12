// Runs the code of a dialogue in the sandbox, for simulate and correct alike: at most `concurrency`
// programs at once across every dialogue in flight (the LLM roles have their own limits), a sandbox
// that fails is asked again with a backoff and then named an outage (the record fails and is retried
// on the next run; it is never the code's fault), and every result is journaled before it is used.

import pLimit, { type LimitFunction } from "p-limit";
import type { LanguageName } from "../../pipeline/code/index.js";
import { clause } from "../../pipeline/errors.js";
import { SandboxOutageError } from "../../pipeline/execution/errors.js";
import {
  type ExecutionResult,
  executionFeedback,
  type FeedbackTemplate,
  runBlock,
} from "../../pipeline/execution/index.js";
import type { CodeRunner } from "../../pipeline/sandbox/types.js";
import type { JournaledRun, RecordJournal } from "./journal.js";
import { runKey } from "./journal.js";

export interface ExecutionSettings {
  run_timeout_s: number;
  compile_timeout_s: number;
  memory_mb?: number | undefined;
  /** tries before a sandbox error counts as an outage */
  sandbox_attempts: number;
}

export { SandboxOutageError };

/** The sandbox has no toolchain for the language: no retry will change that. */
export class LanguageUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "LanguageUnavailableError";
  }
}

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

  constructor(
    private readonly runner: CodeRunner,
    concurrency: number,
    private readonly settings: ExecutionSettings,
    private readonly template: FeedbackTemplate,
    private readonly signal?: AbortSignal,
  ) {
    this.gate = pLimit(concurrency);
  }

  async run(journal: RecordJournal, program: Program): Promise<JournaledRun> {
    const { run_timeout_s, compile_timeout_s, memory_mb } = this.settings;
    const key = runKey([
      program.context,
      program.lang,
      program.code,
      program.previous ?? [],
      run_timeout_s,
      compile_timeout_s,
      memory_mb ?? null,
      this.template,
    ]);
    const known = journal.get(key);
    if (known) return known;
    const result = await this.attempt(program);
    const run = journaled(result, this.template);
    await journal.put(key, run);
    return run;
  }

  private async attempt(program: Program): Promise<ExecutionResult> {
    const { sandbox_attempts: attempts } = this.settings;
    let last: ExecutionResult | undefined;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      last = await this.gate(() =>
        runBlock(this.runner, program.code, program.lang, {
          previous: program.previous ?? [],
          runTimeoutS: this.settings.run_timeout_s,
          compileTimeoutS: this.settings.compile_timeout_s,
          ...(this.settings.memory_mb !== undefined ? { memoryMb: this.settings.memory_mb } : {}),
          ...(this.signal ? { signal: this.signal } : {}),
        }),
      );
      if (last.status !== "sandbox-error") return last;
      if (/unknown language|is not available here/i.test(last.message ?? "")) {
        throw new LanguageUnavailableError(`${program.lang}: ${last.message}`);
      }
      if (this.signal?.aborted || attempt === attempts) break;
      await new Promise((resolve) => setTimeout(resolve, 250 * 2 ** (attempt - 1)));
    }
    throw new SandboxOutageError(
      `the sandbox could not run a ${program.lang} program after ${attempts} tries: ${clause(last?.message ?? "no answer")}. ` +
        "Check the sandbox (`pnpm pipeline sandbox languages`, or the server at sandbox.url) and run again.",
    );
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
