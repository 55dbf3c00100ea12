// What the sandbox said of a dialogue's runs, kept per record (pipeline/execution/kept.ts). The LLM
// cache replays the model's side of a dialogue after a kill -9 and this the sandbox's, so a redone
// record shows the same execution results (a timestamp, a random number, a time-out at the edge of
// the limit) and therefore sends the same conversations, which the LLM cache answers for free.
import type { ExecutionStatus, KeptGroup } from "../../pipeline/execution/index.js";

/** One sandbox run as the dialogue uses it: what happened, and the feedback turn it was rendered to. */
export interface JournaledRun {
  status: ExecutionStatus;
  exitCode: number | null;
  signal: string | null;
  timeS: number | null;
  truncated: boolean;
  message?: string;
  /** the "Execution result:" turn */
  feedback: string;
  /** the last characters of the error output (stderr, else stdout), for naming the error */
  errorTail: string;
}

/** A record's kept runs, keyed by everything each depended on (executor.ts). */
export type RecordJournal = KeptGroup<JournaledRun>;

/** A run as a dialogue's meta shows it (simulate's executions, correct's mistake and fix). */
export function runMeta(run: JournaledRun) {
  return { status: run.status, exit_code: run.exitCode, time_s: run.timeS, truncated: run.truncated };
}

/** The line of a failed run that names its error (Node and Java put a stack trace after it). */
export function errorLine(run: Pick<JournaledRun, "errorTail" | "status">): string {
  if (run.status === "timeout") return "timed out";
  const lines = run.errorTail.split("\n").map((l) => l.trim());
  const named = lines.filter((l) => /\b\w*(?:Error|Exception)\b|\berror\b/i.test(l) && !/^at\s/.test(l));
  return (named.at(-1) ?? lines.filter((l) => l !== "").at(-1) ?? "").slice(0, 300);
}
