// How a dialogue that could not be finished is recorded. Operational failures (a server down, an
// interruption) are `{failed}`, retried cheaply on the next run from the cache and journal; a line a
// batch provider kept failing is a reject (`unansweredOutcome`). Content failures (no code, feedback
// that is not JSON after a reminder, a "mistake" that runs) are rejects: a retry would replay them.

import { SandboxOutageError } from "../../pipeline/execution/errors.js";
import { LlmAbortedError, LlmRequestError, unansweredOutcome } from "../../pipeline/llm/errors.js";
import type { PipelineRecord, RecordOutcome } from "../../pipeline/record.js";

/** A content reason to drop a record, thrown from deep in a dialogue and turned into a reject. */
export class DialogueRejected extends Error {
  constructor(
    readonly reason: string,
    readonly detail: string,
    /** what the dialogue had got to, for `cat --rejects` */
    readonly partial?: Record<string, unknown>,
  ) {
    super(`${reason}: ${detail}`);
    this.name = "DialogueRejected";
  }
}

/** The outcome of a dialogue that threw; rethrows what must stop the run (a refused key) or is a bug. */
export function outcomeOfError(error: unknown, record: PipelineRecord, signal: AbortSignal): RecordOutcome {
  if (error instanceof DialogueRejected) {
    const { reason, detail, partial } = error;
    const kept = { ...record, ...(partial ? { dialogue: partial } : {}) };
    return { rejects: [{ id: record.id, reason, detail, record: kept }] };
  }
  if (error instanceof LlmRequestError) return unansweredOutcome(error, record);
  if (error instanceof SandboxOutageError)
    return { failed: { reason: "sandbox-error", detail: error.message } };
  if (error instanceof LlmAbortedError || signal.aborted) {
    return { failed: { reason: "interrupted", detail: (error as Error)?.message ?? String(error) } };
  }
  // a UserError (a refused key) stops the run; anything else is a bug the runner records as failed
  throw error;
}
