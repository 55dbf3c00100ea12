// Errors of the LLM layer. Two kinds matter to a stage: a request that failed after every retry
// (`LlmRequestError`: the record fails and is retried on the next run, or, for a line a batch kept
// failing, is rejected) and a key the server refuses (`LlmAuthError`: a UserError, so the whole run
// stops at once with advice). No message here ever contains a key: texts from the server go through `redact` first.
import { UserError } from "../errors.js";
import type { PipelineRecord, RecordOutcome, Reject } from "../record.js";
import type { Endpoint } from "./endpoint.js";

/** Why one attempt failed; `retryable` decides whether the client tries again. */
export type AttemptFailureKind =
  | "rate-limited"
  | "server-error"
  | "timeout"
  | "connection"
  | "malformed-response"
  | "empty-choices"
  | "bad-request"
  | "not-found"
  | "http-error"
  /** a batch failed, expired or cancelled the request as often as `batch.retries` allows */
  | "batch-failed";

export class LlmAttemptError extends Error {
  readonly kind: AttemptFailureKind;
  readonly status: number | undefined;
  readonly requestId: string | undefined;
  /** milliseconds the server asked us to wait (Retry-After), if it said */
  readonly retryAfterMs: number | undefined;
  /** nobody answered: refused, unknown host, TLS refused, or a timeout (not a connection dropped mid-answer) */
  readonly unanswered: boolean;
  constructor(
    kind: AttemptFailureKind,
    message: string,
    extra: {
      status?: number | undefined;
      requestId?: string | undefined;
      retryAfterMs?: number | undefined;
      cause?: unknown;
      unanswered?: boolean | undefined;
    } = {},
  ) {
    super(message, extra.cause === undefined ? undefined : { cause: extra.cause });
    this.name = "LlmAttemptError";
    this.kind = kind;
    this.status = extra.status;
    this.requestId = extra.requestId;
    this.retryAfterMs = extra.retryAfterMs;
    this.unanswered = extra.unanswered ?? kind === "timeout";
  }
  get retryable(): boolean {
    return (
      this.kind !== "bad-request" &&
      this.kind !== "not-found" &&
      this.kind !== "http-error" &&
      this.kind !== "batch-failed"
    );
  }
}

/** A request that did not get an answer after all its attempts, or one the server rejects for good. */
export class LlmRequestError extends Error {
  readonly role: string;
  readonly attempts: number;
  readonly last: LlmAttemptError;
  constructor(role: string, attempts: number, last: LlmAttemptError) {
    const tries = attempts === 1 ? "1 attempt" : `${attempts} attempts`;
    const id = last.requestId ? ` (request id ${last.requestId})` : "";
    super(`llm role '${role}': ${last.kind} after ${tries}: ${last.message}${id}`);
    this.name = "LlmRequestError";
    this.role = role;
    this.attempts = attempts;
    this.last = last;
  }
  /** short machine-readable reason for a failed record, e.g. `llm-rate-limited` */
  get reason(): string {
    return `llm-${this.last.kind}`;
  }
}

/**
 * A record whose request got no answer. It fails, so the next run asks again; but a line a batch
 * provider failed more than `batch.retries` times is a reject with the provider's reason, since the
 * stage's batch ledger keeps that verdict and a rerun would only replay it.
 */
export function unansweredOutcome(error: LlmRequestError, record: PipelineRecord): RecordOutcome {
  const reject = batchFailedReject(error, record.id);
  if (reject) return { rejects: [{ ...reject, record: { ...record } }] };
  return { failed: { reason: error.reason, detail: error.message } };
}

/** The reject of a request a batch provider kept failing (see `unansweredOutcome`); none for any other. */
export function batchFailedReject(error: LlmRequestError, id: string): Reject | undefined {
  if (error.last.kind !== "batch-failed") return undefined;
  return { id, reason: error.reason, detail: error.message };
}

/** The run was interrupted while this request waited (queue, backoff, budget); nothing was lost. */
export class LlmAbortedError extends Error {
  constructor(role: string) {
    super(`llm role '${role}': interrupted before the request was answered`);
    this.name = "LlmAbortedError";
  }
}

/** 401/403: every further request would fail the same way, so the run stops here. */
export class LlmAuthError extends UserError {
  readonly status: number;
  constructor({ role, shownUrl, apiKeySource }: Endpoint, status: number, serverMessage: string) {
    const what = status === 401 ? "rejected the API key" : "refused access (403)";
    super(
      `llm role '${role}': the server at ${shownUrl} ${what}: ${serverMessage}\n` +
        `Check the key in ${apiKeySource} (or set llm.${role}.api_key_env to the variable that holds the ` +
        `right key), and that llm.${role}.model is a model this key may use. Nothing was recorded for ` +
        "the records in flight; rerun once the key is fixed.",
      { exitCode: 3 },
    );
    this.status = status;
  }
}

/** 404: the model or the route does not exist there; every request would fail the same way. */
export class LlmNotFoundError extends UserError {
  constructor({ role, shownUrl, config }: Endpoint, serverMessage: string) {
    super(
      `llm role '${role}': the server at ${shownUrl} answered 404 for model ${config.model}: ${serverMessage}\n` +
        `Check llm.${role}.model (the name the server lists under /models) and llm.${role}.base_url ` +
        "(OpenAI-compatible servers usually want it to end in /v1).",
      { exitCode: 3 },
    );
  }
}

/**
 * No server of the role ever answered (refused, unknown host, TLS, timeouts) within `probe_s`: a
 * wrong address or a server that is not up, which no retry of a record can fix.
 */
export class LlmUnreachableError extends UserError {
  constructor({ role, replicas, config }: Endpoint, attempts: number, last: LlmAttemptError) {
    const urlSource =
      config.base_url === undefined
        ? `llm.${role}.base_url (unset, so $${config.base_url_env})`
        : `llm.${role}.base_url`;
    super(
      `llm role '${role}': no answer from ${replicas.map((r) => r.shownUrl).join(", ")} in ${config.probe_s} s ` +
        `(${attempts} attempts, the last: ${last.kind}: ${last.message})\n` +
        `Check ${urlSource}, that the server is up and listening there, and that the path ends in /v1 ` +
        "(e.g. http://127.0.0.1:8000/v1). Nothing was recorded for the records in flight; rerun once the " +
        `server answers (llm.${role}.probe_s sets how long a server that never answered is tried).`,
      { exitCode: 3 },
    );
  }
}

/** Every server of the role failed for `outage_s` after answering, and `on_outage` is `stop`. */
export class LlmOutageError extends UserError {
  constructor({ role, replicas }: Endpoint, since: Date, last: LlmAttemptError) {
    super(
      `llm role '${role}': every server (${replicas.map((r) => r.shownUrl).join(", ")}) has failed since ${clock(since)} ` +
        `(the last: ${last.kind}: ${last.message}); stopping, as llm.${role}.on_outage is stop.\n` +
        "Nothing was recorded for the records in flight; rerun once the server answers again " +
        `(llm.${role}.on_outage: wait waits for it instead).`,
      { exitCode: 3 },
    );
  }
}

/** hh:mm, local time: when an outage began, for a message */
export function clock(at: Date): string {
  return at.toTimeString().slice(0, 5);
}

/** Replaces every occurrence of the secret in a text a server or library produced. */
export function redact(text: string, secret: string | undefined): string {
  if (!secret || secret.length < 4) return text;
  return text.split(secret).join("[redacted]");
}
