// The execution feedback a model (or a dataset reader) sees, in the released Code-Feedback style: a
// user turn that starts with "Execution result:" and shows what the interpreter showed. Long output
// keeps its head and its tail (the end of a traceback is where the error is), with the cut marked.
import type { ExecutionResult } from "./result.js";

export const DEFAULT_FEEDBACK_TEMPLATE = {
  /** the whole turn; `{result}` is replaced by the text below */
  turn: "Execution result: \n{result}",
  /** a clean run that printed nothing */
  no_output: "The code ran successfully and printed nothing.",
  /** a run or compilation that went over its time limit */
  timeout: "Execution timed out",
  /** a clean run whose output a test did not expect; `{input}`, `{expected}`, `{actual}` */
  wrong_output: "Input: {input}\nExpected output: {expected}\nActual output: {actual}",
  /** the same without a test input */
  wrong_output_no_input: "Expected output: {expected}\nActual output: {actual}",
  /** the most characters of output shown; beyond it the head and the tail are kept */
  max_chars: 2000,
  /** share of `max_chars` given to the head (the rest to the tail) */
  head_share: 0.4,
};

export type FeedbackTemplate = typeof DEFAULT_FEEDBACK_TEMPLATE;

/** Keeps the head and the tail of a long text, saying how much was left out in between. */
export function headAndTail(text: string, maxChars: number, headShare = 0.4): string {
  if (text.length <= maxChars) return text;
  const head = Math.max(0, Math.floor(maxChars * headShare));
  const tail = Math.max(0, maxChars - head);
  const omitted = text.length - head - tail;
  return `${text.slice(0, head)}\n[... ${omitted.toLocaleString("en-US")} characters omitted ...]\n${text.slice(text.length - tail)}`;
}

/** The text of an execution result, without the "Execution result:" frame. */
export function describeExecution(
  result: ExecutionResult,
  template: FeedbackTemplate = DEFAULT_FEEDBACK_TEMPLATE,
): string {
  const cut = (s: string) => headAndTail(s.replace(/\s+$/, ""), template.max_chars, template.head_share);
  switch (result.status) {
    case "timeout":
      return template.timeout;
    case "wrong-output": {
      const m = result.mismatch;
      const fill = (t: string) =>
        t
          .replace("{input}", () => cut(m?.input ?? ""))
          .replace("{expected}", () => cut(m?.expected ?? ""))
          .replace("{actual}", () => cut(m?.actual ?? ""));
      return fill(m?.input !== undefined ? template.wrong_output : template.wrong_output_no_input);
    }
    case "success": {
      const out = result.stdout.replace(/\s+$/, "");
      return out === "" ? template.no_output : cut(out);
    }
    case "compile-error":
    case "runtime-error": {
      // The error is on stderr; what the program printed before it often explains it.
      const parts = [result.stdout, result.stderr].map((s) => s.replace(/\s+$/, "")).filter((s) => s !== "");
      if (parts.length === 0) {
        const how = result.signal
          ? `killed by ${result.signal}`
          : `exit code ${result.exitCode ?? "unknown"}`;
        return result.status === "compile-error"
          ? `Compilation failed (${how}) without a message.`
          : `The program ended with ${how} without an error message.`;
      }
      return cut(parts.join("\n"));
    }
    case "language-unavailable":
    case "sandbox-error":
      return `The code could not be executed: ${result.message ?? "sandbox error"}`;
  }
}

/** The whole feedback turn, e.g. "Execution result: \nNameError: name 'x' is not defined". */
export function executionFeedback(
  result: ExecutionResult,
  template: FeedbackTemplate = DEFAULT_FEEDBACK_TEMPLATE,
): string {
  const text = describeExecution(result, template);
  return template.turn.replace("{result}", () => text);
}
