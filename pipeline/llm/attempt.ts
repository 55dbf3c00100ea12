// One attempt at one chat completion through the official SDK, with a deadline covering the whole
// answer (for JSON the SDK's own timeout, since our fetch settles with the whole body; for a stream a
// deadline of ours), and every way it can go wrong turned into an LlmAttemptError of a known kind.
// The SDK's own retries are off: the client decides.
import OpenAI from "openai";
import { unreached } from "../errors.js";
import { innermost } from "../liveness.js";
import { retryAfterMs } from "./backoff.js";
import type { Sampling } from "./config.js";
import { LlmAttemptError, redact } from "./errors.js";
import type { ChatMessage } from "./types.js";

export interface AttemptAnswer {
  content: string;
  model: string;
  finishReason: string | null;
  /** undefined when the server did not report usage */
  promptTokens: number | undefined;
  completionTokens: number | undefined;
}

export interface AttemptRequest {
  model: string;
  messages: readonly ChatMessage[];
  sampling: Sampling;
  stream: boolean;
  timeoutMs: number;
  /** a structured-output request (structured.ts), sent as is */
  responseFormat?: OpenAI.ResponseFormatJSONSchema;
}

/** Thrown for 401/403; the client turns it into an LlmAuthError that stops the run. */
export class AuthRefusedError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.name = "AuthRefusedError";
    this.status = status;
  }
}

export function createSdkClient(
  baseUrl: string,
  apiKey: string | undefined,
  fetch: (input: string | URL | Request, init?: RequestInit) => Promise<Response>,
): OpenAI {
  return new OpenAI({
    baseURL: baseUrl,
    fetch,
    // The SDK insists on a key; servers without auth ignore the header.
    apiKey: apiKey ?? "no-key",
    maxRetries: 0,
    // Its logger would print unparseable bodies; we report them ourselves, redacted.
    logLevel: "off",
  });
}

/** The Accept header of a streaming request; `pipeline/http-fetch.ts` streams only answers to it. */
export const STREAM_ACCEPT = "text/event-stream, application/json";

export async function attemptChat(
  sdk: OpenAI,
  request: AttemptRequest,
  apiKey: string | undefined,
): Promise<AttemptAnswer> {
  const body = {
    model: request.model,
    messages: request.messages as ChatMessage[],
    ...request.sampling,
    ...(request.responseFormat ? { response_format: request.responseFormat } : {}),
  };
  if (!request.stream) {
    // The SDK's timeout runs until our fetch settles, and our fetch settles with the whole body
    // (pipeline/http-fetch.ts): it is the deadline of the whole answer.
    try {
      const data: unknown = await sdk.chat.completions.create(body, {
        maxRetries: 0,
        timeout: request.timeoutMs,
      });
      // The SDK puts the server's x-request-id on every object answer as `_request_id`.
      const requestId = (data as { _request_id?: string | null } | null)?._request_id ?? undefined;
      return readCompletion(data, requestId, request);
    } catch (error) {
      throw classify(error, false, request.timeoutMs, apiKey);
    }
  }
  // A stream settles at its headers: our own deadline covers the rest of it.
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, request.timeoutMs);
  try {
    const stream = await sdk.chat.completions.create(
      { ...body, stream: true, stream_options: { include_usage: true } },
      {
        signal: controller.signal,
        maxRetries: 0,
        timeout: request.timeoutMs,
        // Tells our fetch to hand the body out as it comes (any other answer is read whole).
        headers: { Accept: STREAM_ACCEPT },
      },
    );
    let content = "";
    let sawChoice = false;
    let finishReason: string | null = null;
    let model = request.model;
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const chunk of stream) {
      if (chunk.model) model = chunk.model;
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices?.[0];
      if (!choice) continue;
      sawChoice = true;
      content += choice.delta?.content ?? "";
      if (choice.finish_reason) finishReason = choice.finish_reason;
    }
    // The SDK ends an aborted stream quietly; the deadline is what aborted it.
    if (timedOut) throw timeoutError(request.timeoutMs);
    if (!sawChoice) throw new LlmAttemptError("empty-choices", "the stream carried no choices");
    return {
      content,
      model,
      finishReason,
      promptTokens: usage?.prompt_tokens,
      completionTokens: usage?.completion_tokens,
    };
  } catch (error) {
    throw classify(error, timedOut, request.timeoutMs, apiKey);
  } finally {
    clearTimeout(timer);
  }
}

function readCompletion(
  data: unknown,
  requestId: string | undefined,
  request: AttemptRequest,
): AttemptAnswer {
  const extra = { requestId };
  if (typeof data !== "object" || data === null) {
    const sample = typeof data === "string" ? `: ${JSON.stringify(data.slice(0, 80))}` : "";
    throw new LlmAttemptError("malformed-response", `the answer is not a JSON object${sample}`, extra);
  }
  const completion = data as Partial<OpenAI.ChatCompletion>;
  if (!Array.isArray(completion.choices)) {
    throw new LlmAttemptError("malformed-response", "the answer has no `choices` array", extra);
  }
  const choice = completion.choices[0];
  if (!choice) throw new LlmAttemptError("empty-choices", "the answer has an empty `choices` array", extra);
  const content = choice.message?.content;
  if (typeof content !== "string") {
    throw new LlmAttemptError("malformed-response", "the first choice has no text content", extra);
  }
  return {
    content,
    model: typeof completion.model === "string" && completion.model ? completion.model : request.model,
    finishReason: choice.finish_reason ?? null,
    promptTokens: completion.usage?.prompt_tokens,
    completionTokens: completion.usage?.completion_tokens,
  };
}

function timeoutError(timeoutMs: number): LlmAttemptError {
  return new LlmAttemptError("timeout", `no complete answer within ${timeoutMs / 1000} s`);
}

function classify(error: unknown, timedOut: boolean, timeoutMs: number, apiKey: string | undefined) {
  if (error instanceof LlmAttemptError) {
    // Ours, but it may quote the server's body.
    const message = redact(error.message, apiKey);
    return message === error.message ? error : new LlmAttemptError(error.kind, message, error);
  }
  if (timedOut) return timeoutError(timeoutMs);
  if (error instanceof OpenAI.APIError && error.status !== undefined) {
    const status = error.status;
    const message = redact(error.message, apiKey);
    const extra = { status, requestId: error.requestID ?? undefined };
    if (status === 401 || status === 403) return new AuthRefusedError(status, message);
    if (status === 429 || status >= 500 || status === 408 || status === 409) {
      return new LlmAttemptError(status === 429 ? "rate-limited" : "server-error", message, {
        ...extra,
        retryAfterMs: retryAfterMs(error.headers),
      });
    }
    if (status === 404) return new LlmAttemptError("not-found", message, extra);
    if (status === 400 || status === 413 || status === 422) {
      return new LlmAttemptError("bad-request", message, extra);
    }
    return new LlmAttemptError("http-error", message, extra);
  }
  if (error instanceof OpenAI.APIConnectionTimeoutError) return timeoutError(timeoutMs);
  if (error instanceof OpenAI.APIConnectionError) {
    // the innermost cause says what happened (`connect ECONNREFUSED 127.0.0.1:8000`), not "fetch failed"
    const inner = innermost(error);
    const cause = inner !== error.message ? `: ${inner}` : "";
    return new LlmAttemptError("connection", redact(`${error.message}${cause}`, apiKey), {
      unanswered: unreached(error),
    });
  }
  // An error event inside a stream has no status: the server failed mid-answer.
  if (error instanceof OpenAI.APIError) {
    return new LlmAttemptError("server-error", redact(error.message, apiKey));
  }
  if (error instanceof SyntaxError) {
    // Not the parser's message: it quotes the body around the error, which may hold a key.
    return new LlmAttemptError("malformed-response", "the answer is not valid JSON");
  }
  // undici reports a connection dropped while reading the body as a TypeError ("terminated").
  if (error instanceof TypeError) {
    return new LlmAttemptError("connection", redact(error.message, apiKey));
  }
  return error;
}
