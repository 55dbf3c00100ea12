// One simulated interaction as it unfolds: the conversation the models see, the code that ran and
// what it came to. The execution feedback loop lives here because both phases of the paper's
// simulation end in it: after the first answer, and after each refinement the human feedback asks for.
import type { ChatMessage, LlmClient } from "../../pipeline/llm/types.js";
import { type AnswerCode, codeOfAnswer } from "../dialogue-kit/code.js";
import type { Executor } from "../dialogue-kit/executor.js";
import { type RecordJournal, runMeta } from "../dialogue-kit/journal.js";
import { DialogueRejected } from "../dialogue-kit/outcome.js";

/** One run of the dialogue's code, as `meta.executions` keeps it. */
export type ExecutionEntry = {
  phase: "execution-feedback" | "human-feedback";
  /** index in `messages` of the "Execution result:" turn */
  turn: number;
  /** the role whose answer held the code */
  by: string;
  lang: string;
} & ReturnType<typeof runMeta>;

export interface LoopEnv {
  strong: LlmClient;
  strongRole: string;
  executor: Executor;
  journal: RecordJournal;
  maxIterations: number;
  notebook: boolean;
  signal: AbortSignal;
  interrupted: () => Error;
}

export class Interaction {
  readonly executions: ExecutionEntry[] = [];
  /** Python cells that ran cleanly: what a later cell of the session sees */
  private readonly cells: string[] = [];
  private lastCode: AnswerCode | undefined;
  private lastStatus: string | undefined;
  /** the last answer holds code that was never run (the iteration cap was reached) */
  unrun = false;
  /** the cap was reached at least once */
  capped = false;

  constructor(
    readonly messages: ChatMessage[],
    /** the record's language: picks among an answer's blocks, names an untagged one */
    readonly hint: string | undefined,
  ) {}

  get lang(): string | undefined {
    return this.lastCode?.lang;
  }

  /** Whether the dialogue ends with code that ran cleanly. */
  get passed(): boolean {
    return this.lastStatus === "success" && !this.unrun;
  }

  /** The model that answered, per role. */
  readonly models: Record<string, string> = {};

  /** Why each assistant turn ended, by its index in `messages` (`length`: cut by max_tokens). */
  readonly finishReasons: Record<string, string | null> = {};

  /** The next assistant turn, from `client` (answering as `role`). */
  async ask(client: LlmClient, role: string, env: Pick<LoopEnv, "signal" | "interrupted">): Promise<void> {
    if (env.signal.aborted) throw env.interrupted();
    const answer = await client.chat([...this.messages], { signal: env.signal });
    // a content outcome, not a failure: retrying would replay the same cached answer to the same end
    if (answer.content.trim() === "") {
      throw new DialogueRejected(
        "empty-answer",
        `the ${role} model answered with nothing (finish_reason: ${answer.finishReason ?? "none"})`,
        { messages: this.messages },
      );
    }
    this.models[role] = answer.model;
    this.messages.push({ role: "assistant", content: answer.content });
    this.finishReasons[String(this.messages.length - 1)] = answer.finishReason;
  }

  /**
   * The paper's execution feedback: the latest answer's code runs, its result becomes the next user
   * turn, the strong model answers it; again while the answer brings new code, at most
   * `maxIterations` runs. An answer without new code (the model analyses a clean run, or considers
   * the task done) ends the loop.
   *
   * When the last run the cap allows fails, no answer is asked for: it would be code nobody runs,
   * and a reviewer would then comment on it as if it had worked. The dialogue ends there and is
   * rejected as `capped-failing` (docs/simulate.md). When that run was clean, its analysis is still
   * asked for (the result needs an answer); code in it is left unrun and ends the dialogue.
   */
  async executionFeedbackLoop(env: LoopEnv, phase: ExecutionEntry["phase"], firstBy: string): Promise<void> {
    let by = firstBy;
    for (let iteration = 0; ; iteration++) {
      const code = codeOfAnswer(this.messages.at(-1)!.content, this.hint);
      if (!code) return;
      // A clean run's analysis often repeats the code it talks about: nothing new to run.
      if (this.lastStatus === "success" && code.code.trim() === this.lastCode?.code.trim()) return;
      if (iteration === env.maxIterations) {
        this.unrun = true;
        this.capped = true;
        return;
      }
      if (env.signal.aborted) throw env.interrupted();
      const python = code.lang === "python" && env.notebook;
      const run = await env.executor.run(env.journal, {
        code: code.code,
        lang: code.lang,
        previous: python ? [...this.cells] : [],
        context: [...this.messages],
      });
      this.lastCode = code;
      this.lastStatus = run.status;
      this.unrun = false;
      if (python && run.status === "success") this.cells.push(code.code);
      this.messages.push({ role: "user", content: run.feedback });
      this.executions.push({
        phase,
        turn: this.messages.length - 1,
        by,
        lang: code.lang,
        ...runMeta(run),
      });
      if (iteration + 1 === env.maxIterations && run.status !== "success") {
        this.capped = true;
        throw new DialogueRejected(
          "capped-failing",
          `the code still failed (${run.status}) after ${env.maxIterations} runs in the ${phase} phase; ` +
            "no further answer was asked for. Raise max_iterations to give the model more tries",
          { messages: this.messages, executions: this.executions },
        );
      }
      await this.ask(env.strong, env.strongRole, env);
      by = env.strongRole;
    }
  }
}
