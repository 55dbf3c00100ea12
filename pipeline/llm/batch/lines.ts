// The batch file format shared by OpenAI's Batch API and `vllm run-batch`: one request a line
// (`custom_id`, `method`, `url`, `body`) in, one result a line out. A request's custom_id is its
// cache key in hex, so an answer goes into the response cache whichever file or run it comes from.
import { UserError } from "../../errors.js";
import type { CachedAnswer } from "../cache.js";
import type { Sampling } from "../config.js";
import { responseFormat } from "../structured.js";
import { estimatePromptTokens, estimateTextTokens } from "../tokens.js";
import type { ChatMessage, JsonSchemaFormat } from "../types.js";

export const CHAT_URL = "/v1/chat/completions";

export interface BatchRequest {
  /** the cache key, hex */
  id: string;
  model: string;
  messages: readonly ChatMessage[];
  sampling: Sampling;
  jsonSchema?: JsonSchemaFormat | undefined;
}

export function inputLine(request: BatchRequest): string {
  const body = {
    model: request.model,
    messages: request.messages,
    ...request.sampling,
    ...(request.jsonSchema ? { response_format: responseFormat(request.jsonSchema) } : {}),
  };
  return `${JSON.stringify({ custom_id: request.id, method: "POST", url: CHAT_URL, body })}\n`;
}

/**
 * The requests as files of at most `maxLines` lines and `maxBytes` bytes each, one model per file.
 * A single line over `maxBytes` cannot be sent in any file: it is returned apart, to fail its record.
 */
export function splitIntoFiles(
  requests: readonly BatchRequest[],
  limits: { maxLines: number; maxBytes: number },
): { files: { model: string; ids: string[]; text: string }[]; tooLarge: BatchRequest[] } {
  const files: { model: string; ids: string[]; text: string }[] = [];
  const tooLarge: BatchRequest[] = [];
  const open = new Map<string, { model: string; ids: string[]; parts: string[]; bytes: number }>();
  const close = (model: string) => {
    const file = open.get(model);
    if (!file || file.ids.length === 0) return;
    files.push({ model, ids: file.ids, text: file.parts.join("") });
    open.delete(model);
  };
  for (const request of requests) {
    const line = inputLine(request);
    const bytes = Buffer.byteLength(line);
    if (bytes > limits.maxBytes) {
      tooLarge.push(request);
      continue;
    }
    let file = open.get(request.model);
    if (file && (file.ids.length >= limits.maxLines || file.bytes + bytes > limits.maxBytes)) {
      close(request.model);
      file = undefined;
    }
    if (!file) {
      file = { model: request.model, ids: [], parts: [], bytes: 0 };
      open.set(request.model, file);
    }
    file.ids.push(request.id);
    file.parts.push(line);
    file.bytes += bytes;
  }
  for (const model of [...open.keys()]) close(model);
  return { files, tooLarge };
}

/** One line of an output or error file: an answer, or why there is none. */
export type BatchResult = { id: string; answer: CachedAnswer } | { id: string; failure: string };

/**
 * Reads an output (or error) file. A line that is not a JSON result is a UserError naming the file
 * and the line: such a file came from the wrong tool or was cut mid-line by something else.
 */
export function parseResults(text: string, file: string, model: string): BatchResult[] {
  const results: BatchResult[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === "") continue;
    const bad = (why: string) =>
      new UserError(
        `${file}:${i + 1}: ${why}; a batch output file has one JSON result a line ({"custom_id": ..., "response": {"status_code": ..., "body": ...}} or {"custom_id": ..., "error": ...}). Fix or remove the file and run again.`,
      );
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      throw bad("not JSON");
    }
    if (
      typeof parsed !== "object" ||
      parsed === null ||
      typeof (parsed as { custom_id?: unknown }).custom_id !== "string"
    ) {
      throw bad("no custom_id");
    }
    results.push(readResult(parsed as RawResult, model));
  }
  return results;
}

interface RawResult {
  custom_id: string;
  response?: {
    status_code?: number;
    body?: {
      model?: string;
      choices?: { message?: { content?: unknown }; finish_reason?: string | null }[];
      usage?: { prompt_tokens?: number; completion_tokens?: number };
      error?: { message?: string } | string;
    };
  } | null;
  error?: { code?: string; message?: string } | null;
}

function readResult(raw: RawResult, model: string): BatchResult {
  const id = raw.custom_id;
  if (raw.error) {
    return { id, failure: [raw.error.code, raw.error.message].filter(Boolean).join(": ") || "failed" };
  }
  const status = raw.response?.status_code;
  const body = raw.response?.body;
  if (status !== 200 || !body) {
    const message = typeof body?.error === "string" ? body.error : body?.error?.message;
    return { id, failure: `status ${status ?? "missing"}${message ? `: ${message}` : ""}` };
  }
  const choice = body.choices?.[0];
  const content = choice?.message?.content;
  if (typeof content !== "string") return { id, failure: "the answer has no text content" };
  return {
    id,
    answer: {
      content,
      model: typeof body.model === "string" && body.model ? body.model : model,
      finishReason: choice?.finish_reason ?? null,
      // estimated like an online answer without usage (the request itself is not at hand here)
      promptTokens: body.usage?.prompt_tokens ?? estimatePromptTokens([]),
      completionTokens: body.usage?.completion_tokens ?? estimateTextTokens(content),
    },
  };
}
