// One task, as the paper evaluates it: the model answers the benchmark prompt (greedy decoding), its
// code is extracted and judged in the sandbox, and while it fails and rounds are left the feedback
// goes back to it as the next user turn: the execution result, or human-like guidance written by
// the feedback role from the paper's prompt (without the canonical solution, or with it: oracle).
// The evaluation ends at the first passing round or after the last one.
import { extractMainCode } from "../../code/extract.js";
import {
  DEFAULT_FEEDBACK_TEMPLATE,
  describeExecution,
  type ExecutionResult,
  executionFeedback,
  SandboxOutageError,
} from "../../execution/index.js";
import type { ChatMessage, LlmClient } from "../../llm/types.js";
import type { CodeRunner } from "../../sandbox/types.js";
import type { BenchmarkTask } from "./benchmarks.js";
import type { BenchmarkName, FeedbackKind } from "./config.js";
import { type JudgeOptions, judgeSolution } from "./judge.js";
import { guidancePrompt, taskPrompt } from "./prompts.js";

export const ROUND_OUTCOMES = ["passed", "wrong-output", "runtime-error", "timeout", "no-code"] as const;
export type RoundOutcome = (typeof ROUND_OUTCOMES)[number];

/** One attempt at one task: what the model was told, what it answered and what that came to. */
export interface RoundRecord {
  task_id: string;
  round: number;
  /** true on the task's final round (it passed, or no rounds were left) */
  last: boolean;
  /** the user turn this round answers: the paper's prompt in round 1, then the feedback turn */
  prompt: string;
  answer: string;
  /** the code block taken from the answer; null when it had none */
  code: string | null;
  /** the code that ran (demo code dropped, a HumanEval continuation joined to its prompt) */
  sanitized: string | null;
  outcome: RoundOutcome;
  /** the execution result as the model would see it */
  execution: string;
  /** the failing assert, for wrong-output */
  assertion?: string;
  /** the turn sent to the model for the next round (execution result or guidance); null when none */
  feedback: string | null;
  /** true when the answer came from the response cache */
  cached: boolean;
  finish_reason: string | null;
}

/** The text for an answer without a code block: there was nothing to run. */
export const NO_CODE_RESULT = "No code block was found in the answer, so nothing could be run.";

export interface SessionOptions {
  benchmark: BenchmarkName;
  rounds: number;
  feedback: FeedbackKind;
  fence: "backticks" | "verbatim";
  model: LlmClient;
  /** the role writing guidance; needed for `human` and `oracle` */
  guide?: LlmClient | undefined;
  runner: CodeRunner;
  judge: JudgeOptions;
  signal?: AbortSignal | undefined;
}

const OUTCOME: Record<ExecutionResult["status"], RoundOutcome | undefined> = {
  success: "passed",
  "wrong-output": "wrong-output",
  "runtime-error": "runtime-error",
  "compile-error": "runtime-error",
  timeout: "timeout",
  // not the model's fault: the task is retried on the next run, not scored
  "language-unavailable": undefined,
  "sandbox-error": undefined,
};

async function writeGuidance(
  options: SessionOptions,
  task: BenchmarkTask,
  code: string,
  executionResult: string,
): Promise<string> {
  if (options.feedback === "execution") throw new Error("no guidance for execution feedback");
  if (!options.guide) throw new Error(`${options.feedback} feedback needs a feedback role`);
  const prompt = guidancePrompt(options.feedback, {
    originalPrompt: task.prompt,
    code,
    executionResult,
    canonical: task.canonical,
  });
  const answer = await options.guide.chat([{ role: "user", content: prompt }], {
    temperature: 0,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  return answer.content.trim();
}

/** Every round of `task`, the last one marked; throws SandboxOutageError or the LLM layer's errors. */
export async function evaluateTask(task: BenchmarkTask, options: SessionOptions): Promise<RoundRecord[]> {
  const messages: ChatMessage[] = [
    { role: "user", content: taskPrompt(options.benchmark, task.prompt, options.fence) },
  ];
  const records: RoundRecord[] = [];
  for (let round = 1; round <= options.rounds; round++) {
    const answer = await options.model.chat(messages, {
      temperature: 0,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    messages.push({ role: "assistant", content: answer.content });
    const block = extractMainCode(answer.content, {
      language: "python",
      ...(task.entryPoint ? { entryPoint: task.entryPoint } : {}),
      removeMain: true,
    });
    const record: RoundRecord = {
      task_id: task.id,
      round,
      last: false,
      prompt: messages[messages.length - 2]!.content,
      answer: answer.content,
      code: block?.code ?? null,
      sanitized: null,
      outcome: "no-code",
      execution: DEFAULT_FEEDBACK_TEMPLATE.turn.replace("{result}", NO_CODE_RESULT),
      feedback: null,
      cached: answer.cached,
      finish_reason: answer.finishReason,
    };
    let resultText = NO_CODE_RESULT;
    if (block) {
      const judged = await judgeSolution(options.runner, task, block.code, {
        ...options.judge,
        ...(options.signal ? { signal: options.signal } : {}),
      });
      const outcome = OUTCOME[judged.result.status];
      if (!outcome) {
        throw new SandboxOutageError(
          `the sandbox could not run task ${task.id}: ${judged.result.message ?? "sandbox error"}`,
        );
      }
      record.outcome = outcome;
      record.sanitized = judged.sanitized;
      record.execution = executionFeedback(judged.result);
      if (judged.assertion) record.assertion = judged.assertion;
      resultText = describeExecution(judged.result);
    }
    records.push(record);
    if (record.outcome === "passed" || round === options.rounds) break;
    record.feedback =
      options.feedback === "execution"
        ? record.execution
        : await writeGuidance(options, task, record.sanitized ?? record.code ?? "", resultText);
    messages.push({ role: "user", content: record.feedback });
  }
  records[records.length - 1]!.last = true;
  return records;
}
