// One dialogue through the sandbox: every fenced code block of every assistant answer, in order. The
// Python blocks of a dialogue share one session, as in the paper's interpreter (a later block sees what
// an earlier one defined); every other block runs as its own program. The dialogue's outcome is that of
// its final code: the blocks of the last answer that has any.
import { extractCodeBlocks, type LanguageName } from "../../pipeline/code/index.js";
import type { Dialogue } from "../../pipeline/dialogue.js";
import { type ExecutionResult, headAndTail, type SandboxStop } from "../../pipeline/execution/index.js";
import { afterRunning, beforeRunning, errorLine, languageMissing, type NotRunnable } from "./causes.js";
import type { BlockOutcome, DialogueOutcome, NotRunnableReason } from "./config.js";
import { type HarnessKind, harnessFor } from "./harness.js";

export interface BlockValidation {
  /** index of the assistant message in `messages` */
  message: number;
  /** index of the fenced block within that message */
  block: number;
  /** canonical language, the fence tag when it names none, or `unknown` */
  lang: string;
  outcome: BlockOutcome;
  reason?: NotRunnableReason;
  /** the error of a failed or timed-out block; what kept a not-runnable one from saying anything */
  error?: string;
  /** how the block was run: as written, with an entry point around it, or after earlier Python blocks */
  harness?: HarnessKind | "notebook";
  /** seconds the run took (compilation excluded) */
  time_s?: number | null;
  /** a limit the sandbox enforced on the run (network, a write, processes, memory, output) */
  stopped?: SandboxStop;
  /** exit status of the step the output comes from (the compiler after a compile error); null: killed */
  exit_code?: number | null;
  signal?: string;
  /**
   * What the step printed, absent when nothing: whole up to OUTPUT_CHARS characters, else its head and
   * tail around a marked cut whose size `stdout_cut` gives (the marker alone could be printed by the code)
   */
  stdout?: string;
  stdout_cut?: number;
  stderr?: string;
  stderr_cut?: number;
  /** the sandbox itself kept only its cap of a stream (sandbox.max_output_bytes): more was printed */
  truncated?: true;
  /** the step's peak memory in KiB, where the sandbox measured it */
  peak_memory_kb?: number;
}

/** Characters of each stream a block's record keeps: enough for a reviewer, small beside the dialogue. */
export const OUTPUT_CHARS = 4096;

export interface DialogueValidation {
  outcome: DialogueOutcome;
  /** why the final code is not runnable, when it is not */
  reason?: NotRunnableReason;
  /** the final code's error, when it failed or timed out */
  error?: string;
  /** index of the message holding the final code */
  final_message?: number;
  blocks: BlockValidation[];
}

/**
 * Runs one program in the sandbox. An outage of the sandbox is thrown (the dialogue is retried on the
 * next run), never returned: a `sandbox-error` result here only ever means the language is missing.
 */
export type RunProgram = (
  code: string,
  language: LanguageName,
  previous: readonly string[],
) => Promise<ExecutionResult>;

// When the final answer has several blocks, the worst one speaks for it: a failing block is not saved
// by a passing usage example, but a block that cannot run (an install line) does not hide one that can.
const RANK: Record<BlockOutcome, number> = { failed: 3, timeout: 2, passed: 1, "not-runnable": 0 };

const NAME_ERROR = /\b(?:NameError|ModuleNotFoundError|ImportError)\b/;

export async function validateDialogue(
  dialogue: Pick<Dialogue, "messages">,
  run: RunProgram,
  /** every block that ran, with its result: the quality gates read its output */
  ran?: (block: BlockValidation, result: ExecutionResult) => void,
): Promise<DialogueValidation> {
  const blocks: BlockValidation[] = [];
  // the Python session: blocks that ran cleanly, replayed before each new one
  const session: string[] = [];
  // the last Python block that could not run: a later NameError is its consequence, not a bug
  let sessionGap: (NotRunnable & { at: number }) | undefined;
  for (const [m, message] of dialogue.messages.entries()) {
    if (message.role !== "assistant") continue;
    const fenced = extractCodeBlocks(message.content).filter((b) => b.fenced && b.code.trim() !== "");
    for (const [b, block] of fenced.entries()) {
      const at = { message: m, block: b, lang: block.lang ?? (block.tag.toLowerCase() || "unknown") };
      const skip = beforeRunning(block);
      if (skip || block.lang === undefined) {
        const why = skip ?? { reason: "fragment" as const, detail: "no recognisable language" };
        blocks.push({ ...at, outcome: "not-runnable", reason: why.reason, error: why.detail });
        continue;
      }
      const lang = block.lang;
      const python = lang === "python";
      const program = harnessFor(block.code, lang);
      const previous = python ? [...session] : [];
      const result = await run(program.code, lang, previous);
      const harness: BlockValidation["harness"] = previous.length > 0 ? "notebook" : program.harness;
      const base = {
        ...at,
        harness,
        time_s: result.timeS,
        ...(result.stopped ? { stopped: result.stopped } : {}),
      };
      const push = (tagged: BlockValidation) => {
        blocks.push(tagged);
        ran?.(tagged, result);
      };
      const missing = languageMissing(result);
      if (missing) {
        blocks.push({ ...base, outcome: "not-runnable", reason: missing.reason, error: missing.detail });
        continue;
      }
      const printed = { ...base, ...whatItPrinted(result) };
      if (result.status === "success") {
        push({ ...printed, outcome: "passed" });
        if (python) session.push(block.code);
        continue;
      }
      let cause = afterRunning(result, { code: block.code, lang, complete: block.complete });
      if (!cause && python && sessionGap && NAME_ERROR.test(result.stderr)) {
        cause = {
          reason: sessionGap.reason,
          detail: `uses what the Python block of message ${sessionGap.at} would define, which could not run: ${sessionGap.detail}`,
        };
      }
      if (cause) {
        push({ ...printed, outcome: "not-runnable", reason: cause.reason, error: cause.detail });
        if (python) sessionGap = { ...cause, at: m };
        continue;
      }
      push({
        ...printed,
        outcome: result.status === "timeout" ? "timeout" : "failed",
        error: errorLine(result),
      });
    }
  }
  return { ...finalOutcome(blocks), blocks };
}

/** The run's exit status, clipped streams and peak memory, as a block's record keeps them. */
function whatItPrinted(result: ExecutionResult): Partial<BlockValidation> {
  const kept: Partial<BlockValidation> = { exit_code: result.exitCode };
  if (result.signal) kept.signal = result.signal;
  for (const stream of ["stdout", "stderr"] as const) {
    const text = result[stream];
    if (text === "") continue;
    kept[stream] = headAndTail(text, OUTPUT_CHARS, 0.5);
    if (text.length > OUTPUT_CHARS) kept[`${stream}_cut`] = text.length - OUTPUT_CHARS;
  }
  if (result.truncated) kept.truncated = true;
  if (result.peakMemoryKb !== undefined) kept.peak_memory_kb = result.peakMemoryKb;
  return kept;
}

function finalOutcome(blocks: BlockValidation[]): Omit<DialogueValidation, "blocks"> {
  const last = blocks[blocks.length - 1];
  if (!last) return { outcome: "no-code" };
  const final = blocks.filter((b) => b.message === last.message);
  const worst = final.reduce((a, b) => (RANK[b.outcome] > RANK[a.outcome] ? b : a));
  const result: Omit<DialogueValidation, "blocks"> = { outcome: worst.outcome, final_message: last.message };
  if (worst.reason) result.reason = worst.reason;
  if (worst.error) result.error = worst.error;
  return result;
}
