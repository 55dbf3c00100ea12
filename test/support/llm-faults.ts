// Faults the test LLM server injects on demand, and the usual ways to choose them: what a real
// provider or proxy does on a bad day, in the shape the client asked for (JSON or server-sent events).
import type { ServerResponse } from "node:http";
import { seededRandom } from "../../pipeline/random.js";

/** Decides a fault for a request, or none; `attempt` counts requests with the same messages, from 1. */
export type FaultRule = (request: { n: number; key: string }, attempt: number) => Fault | undefined;

export type Fault =
  /** `retryAfterS`: a busy server saying when to come back (a 503 with Retry-After) */
  | { type: "status"; status: number; message?: string; retryAfterS?: number }
  | { type: "rate-limit"; retryAfterS?: number; retryAfterMs?: number }
  /** never answers; the socket stays open until the client gives up */
  | { type: "hang" }
  /** sends the headers, then never finishes the body */
  | { type: "hang-body" }
  /** answers with an event stream that never ends, whatever the client asked for */
  | { type: "hang-events" }
  /** a body that is not JSON; `body` replaces the default broken text */
  | { type: "malformed"; body?: string }
  | { type: "empty-choices" }
  /** destroys the connection without an answer */
  | { type: "drop" };

export function injectFault(fault: Fault, stream: boolean, res: ServerResponse) {
  // Body faults take the shape the client asked for: one JSON body, or server-sent events.
  const event = (data: string) => `data: ${data}\n\n`;
  const begin = (type: string) => res.writeHead(200, { "content-type": type });
  switch (fault.type) {
    case "status":
      return sendJson(
        res,
        fault.status,
        { error: { message: fault.message ?? `injected ${fault.status}`, type: "server_error" } },
        fault.retryAfterS === undefined ? {} : { "retry-after": String(fault.retryAfterS) },
      );
    case "rate-limit": {
      const headers: Record<string, string> = {};
      if (fault.retryAfterS !== undefined) headers["retry-after"] = String(fault.retryAfterS);
      if (fault.retryAfterMs !== undefined) headers["retry-after-ms"] = String(fault.retryAfterMs);
      return sendJson(
        res,
        429,
        { error: { message: "Rate limit reached", type: "rate_limit_error" } },
        headers,
      );
    }
    case "hang":
      return;
    case "hang-body":
      if (stream) {
        begin("text/event-stream");
        res.write(event(JSON.stringify(chunkOf("chatcmpl-hang", "m", { content: "Sco" }, null))));
      } else {
        begin("application/json");
        res.write('{"id":"chatcmpl-hang","choices":[');
      }
      return;
    case "hang-events":
      begin("text/event-stream");
      res.write(event(JSON.stringify(chunkOf("chatcmpl-hang", "m", { content: "Sco" }, null))));
      return;
    case "malformed":
      if (fault.body !== undefined) {
        begin(stream ? "text/event-stream" : "application/json");
        res.end(fault.body);
        return;
      }
      if (stream) {
        begin("text/event-stream");
        res.end(`${event('{"id": "chatcmpl-broken", "choices": [{"delta": ')}${event("[DONE]")}`);
      } else {
        begin("application/json");
        res.end('{"id": "chatcmpl-broken", "choices": [{"message": ');
      }
      return;
    case "empty-choices":
      if (stream) {
        begin("text/event-stream");
        const empty = { id: "chatcmpl-empty", object: "chat.completion.chunk", model: "m", choices: [] };
        res.end(`${event(JSON.stringify(empty))}${event("[DONE]")}`);
        return;
      }
      return sendJson(res, 200, { id: "chatcmpl-empty", object: "chat.completion", model: "m", choices: [] });
    case "drop":
      res.socket?.destroy();
      return;
  }
}

export function chunkOf(id: string, model: string, delta: object, finish: string | null) {
  return {
    id,
    object: "chat.completion.chunk",
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** Each conversation fails its first `times` attempts with `fault`, then is answered. */
export function failFirst(times: number, fault: Fault): FaultRule {
  return (_request, attempt) => (attempt <= times ? fault : undefined);
}

/** A seeded share of requests get one of `faults` (seeded, so runs are reproducible). */
export function faultRate(rate: number, faults: Fault[], seed = 1): FaultRule {
  const random = seededRandom(seed);
  return () => (random() < rate ? faults[Math.floor(random() * faults.length)] : undefined);
}
