// A local OpenAI-compatible chat completions server for tests and benchmarks: it answers from rules (or
// one function) after a set latency, as one JSON body or server-sent events with `usage`, misbehaves
// on demand (llm-faults.ts), and counts every request, by a hash of its messages too, with its arrival.
// Kept cheap (one JSON parse and one stringify per request, no logging): the benchmark drives it at
// over a thousand requests per second on two cores. Run standalone: see `main` below.
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { pathToFileURL } from "node:url";
import { type BatchApi, type BatchApiOptions, createBatchApi, type LineBody } from "./batch-api.js";
import { chunkOf, type Fault, injectFault, sendJson } from "./llm-faults.js";

export { type Fault, failFirst, faultRate } from "./llm-faults.js";

export interface ChatRequestBody {
  model: string;
  messages: { role: string; content: string }[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  [key: string]: unknown;
}

export interface ReceivedRequest {
  /** 1-based arrival order */
  n: number;
  /** performance.now() when its body had arrived */
  at: number;
  /** SHA-256 (hex, 16 chars) of the messages: the same conversation has the same key */
  key: string;
  body: ChatRequestBody;
  authorization: string | undefined;
}

export type Reply = string | { content: string; finishReason?: string; usage?: boolean };

export interface Rule {
  match: RegExp | ((request: ReceivedRequest) => boolean);
  reply: Reply | ((request: ReceivedRequest) => Reply);
}

export interface LlmServerOptions {
  /** milliseconds before answering (faults included), or a function of the request */
  latencyMs?: number | ((request: ReceivedRequest) => number);
  /** first matching rule answers; a RegExp is tested against the last user message */
  rules?: Rule[];
  /** answers requests no rule matched (default: `complexityReply`) */
  fallback?: (request: ReceivedRequest) => Reply;
  /** decides a fault for a request, or none; `attempt` counts requests with the same key, from 1 */
  fault?: (request: ReceivedRequest, attempt: number) => Fault | undefined;
  /** when set, requests without `Authorization: Bearer <key>` get a 401 that quotes what they sent */
  requireKey?: string;
  /** keep every request (default true; the benchmark turns it off) */
  keepRequests?: boolean;
  /** default: any free port */
  port?: number;
  /** serve the Files and Batches APIs too (batch-api.ts); without it they are 404, as on vLLM */
  batch?: BatchApiOptions;
}

export interface LlmServer {
  /** base URL for the client, ending in /v1 */
  url: string;
  port: number;
  /** requests received (faulty ones included) */
  readonly count: number;
  /** requests being handled right now, and the most at once */
  readonly inFlight: number;
  readonly maxInFlight: number;
  /** requests received per conversation key */
  readonly byKey: Map<string, number>;
  /** answers sent in full (not faults) per conversation key */
  readonly answered: Map<string, number>;
  readonly requests: ReceivedRequest[];
  /** the Files and Batches APIs, when `batch` was given */
  readonly batch: BatchApi | undefined;
  options: LlmServerOptions;
  reset(): void;
  close(): Promise<void>;
}

export function conversationKey(messages: { role: string; content: string }[]): string {
  return createHash("sha256").update(JSON.stringify(messages)).digest("hex").slice(0, 16);
}

export function lastUserMessage(request: ReceivedRequest): string {
  const messages = request.body.messages;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.role === "user") return messages[i]!.content;
  }
  return "";
}

/** A deterministic complexity answer: the score comes from a hash of the query (1-5). */
export function complexityReply(request: ReceivedRequest): Reply {
  const score = (Number.parseInt(request.key.slice(0, 8), 16) % 5) + 1;
  return `Score: ${score}\n\nThe query is rated ${score} because of how many steps it needs.`;
}

export async function startLlmServer(options: LlmServerOptions = {}): Promise<LlmServer> {
  let count = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  const byKey = new Map<string, number>();
  const answered = new Map<string, number>();
  const requests: ReceivedRequest[] = [];
  const state: LlmServer = {
    url: "",
    port: 0,
    get count() {
      return count;
    },
    get inFlight() {
      return inFlight;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    byKey,
    answered,
    requests,
    batch: undefined,
    options,
    reset() {
      count = 0;
      maxInFlight = inFlight;
      byKey.clear();
      answered.clear();
      requests.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };

  // A batch's line is a request like any other: counted, kept and answered by the same rules.
  const receive = (body: ChatRequestBody, authorization: string | undefined) => {
    count++;
    const key = conversationKey(body.messages);
    const attempt = (byKey.get(key) ?? 0) + 1;
    byKey.set(key, attempt);
    const request: ReceivedRequest = { n: count, at: performance.now(), key, body, authorization };
    if (state.options.keepRequests !== false) requests.push(request);
    return { request, attempt };
  };
  const batchApi = options.batch
    ? createBatchApi(options.batch, (body: LineBody) => {
        const { request } = receive(body as ChatRequestBody, undefined);
        answered.set(request.key, (answered.get(request.key) ?? 0) + 1);
        return completionBody(state.options, request);
      })
    : undefined;
  (state as { batch: BatchApi | undefined }).batch = batchApi;

  const handle = async (req: IncomingMessage, res: ServerResponse, buffer: Buffer) => {
    if (batchApi && !req.url?.endsWith("/chat/completions")) {
      if (options.requireKey && req.headers.authorization !== `Bearer ${options.requireKey}`) {
        return sendJson(res, 401, {
          error: { message: "Incorrect API key provided", type: "invalid_request_error" },
        });
      }
      if (await batchApi.handle(req, res, buffer)) return;
    }
    const raw = buffer.toString("utf8");
    if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
      return sendJson(res, 404, {
        error: { message: `no route ${req.method} ${req.url}`, type: "not_found" },
      });
    }
    let body: ChatRequestBody;
    try {
      body = JSON.parse(raw) as ChatRequestBody;
    } catch {
      return sendJson(res, 400, {
        error: { message: "the body is not JSON", type: "invalid_request_error" },
      });
    }
    if (!Array.isArray(body.messages)) {
      return sendJson(res, 400, {
        error: { message: "messages must be an array", type: "invalid_request_error" },
      });
    }
    const { request, attempt } = receive(body, req.headers.authorization);
    const key = request.key;
    inFlight++;
    if (inFlight > maxInFlight) maxInFlight = inFlight;
    let finished = false;
    const finish = () => {
      if (!finished) {
        finished = true;
        inFlight--;
      }
    };
    res.on("close", finish);
    const latency = state.options.latencyMs;
    const delay = typeof latency === "function" ? latency(request) : (latency ?? 0);
    const answer = () => {
      if (res.destroyed) return finish();
      if (respond(state.options, request, attempt, res)) {
        answered.set(key, (answered.get(key) ?? 0) + 1);
      }
    };
    if (delay > 0) setTimeout(answer, delay);
    else answer();
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      handle(req, res, Buffer.concat(chunks)).catch((error: unknown) => {
        if (!res.headersSent) sendJson(res, 500, { error: { message: String(error), type: "server_error" } });
      });
    });
  });
  server.keepAliveTimeout = 60_000;
  server.headersTimeout = 65_000;
  // Bursts of a few hundred concurrent connections are the point of the benchmark.
  server.maxConnections = 10_000;
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  state.port = (server.address() as AddressInfo).port;
  state.url = `http://127.0.0.1:${state.port}/v1`;
  return state;
}

/** Answers or misbehaves; true when a real answer was sent. */
function respond(
  options: LlmServerOptions,
  request: ReceivedRequest,
  attempt: number,
  res: ServerResponse,
): boolean {
  if (options.requireKey && request.authorization !== `Bearer ${options.requireKey}`) {
    // Quotes what it was sent, like real providers do, so tests can check that it is redacted.
    const sent = request.authorization?.replace(/^Bearer /, "") ?? "";
    sendJson(res, 401, {
      error: { message: `Incorrect API key provided: ${sent}`, type: "invalid_request_error" },
    });
    return false;
  }
  const fault = options.fault?.(request, attempt);
  if (fault) {
    injectFault(fault, request.body.stream === true, res);
    return false;
  }
  if (!request.body.stream) {
    sendJson(res, 200, completionBody(options, request));
    return true;
  }
  const reply = pickReply(options, request);
  const { content, finishReason, usage } =
    typeof reply === "string" ? { content: reply, finishReason: "stop", usage: true } : reply;
  const model = request.body.model;
  const promptTokens = Math.ceil(JSON.stringify(request.body.messages).length / 4);
  const completionTokens = Math.ceil(content.length / 4);
  const usageBlock = {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
  };
  const id = `chatcmpl-${request.n}`;
  const created = Math.floor(Date.now() / 1000);
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const chunk = (delta: object, finish: string | null) =>
    `data: ${JSON.stringify(chunkOf(id, model, delta, finish))}\n\n`;
  const half = Math.ceil(content.length / 2);
  let out = chunk({ role: "assistant", content: "" }, null);
  out += chunk({ content: content.slice(0, half) }, null);
  out += chunk({ content: content.slice(half) }, null);
  out += chunk({}, finishReason ?? "stop");
  if (usage !== false && request.body.stream_options?.include_usage) {
    out += `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [], usage: usageBlock })}\n\n`;
  }
  out += "data: [DONE]\n\n";
  res.end(out);
  return true;
}

/** The JSON body of a chat completion answering `request`, by the rules. */
function completionBody(options: LlmServerOptions, request: ReceivedRequest): object {
  const reply = pickReply(options, request);
  const { content, finishReason, usage } =
    typeof reply === "string" ? { content: reply, finishReason: "stop", usage: true } : reply;
  const model = request.body.model;
  const promptTokens = Math.ceil(JSON.stringify(request.body.messages).length / 4);
  const completionTokens = Math.ceil(content.length / 4);
  return {
    id: `chatcmpl-${request.n}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: { role: "assistant", content },
        finish_reason: finishReason ?? "stop",
        logprobs: null,
      },
    ],
    ...(usage === false
      ? {}
      : {
          usage: {
            prompt_tokens: promptTokens,
            completion_tokens: completionTokens,
            total_tokens: promptTokens + completionTokens,
          },
        }),
  };
}

function pickReply(options: LlmServerOptions, request: ReceivedRequest): Reply {
  for (const rule of options.rules ?? []) {
    const hit =
      rule.match instanceof RegExp ? rule.match.test(lastUserMessage(request)) : rule.match(request);
    if (hit) return typeof rule.reply === "function" ? rule.reply(request) : rule.reply;
  }
  return (options.fallback ?? complexityReply)(request);
}

// Run standalone (for the benchmark, or by hand):
//   pnpm exec tsx test/support/llm-server.ts --port 8000 --latency 200
// prints `listening <base url>` and answers every request with a complexity score.
async function main(argv: string[]): Promise<void> {
  const arg = (name: string, fallback: number) => {
    const at = argv.indexOf(`--${name}`);
    return at >= 0 ? Number(argv[at + 1]) : fallback;
  };
  const server = await startLlmServer({
    latencyMs: arg("latency", 0),
    port: arg("port", 0),
    keepRequests: false,
  });
  process.stdout.write(`listening ${server.url}\n`);
  // Report the count on demand (SIGUSR2) and on exit, for benchmarks that run it in a child.
  const report = () => {
    const cpu = process.cpuUsage();
    process.stdout.write(`count ${server.count} cpu_us ${cpu.user + cpu.system}\n`);
  };
  process.on("SIGUSR2", report);
  const stop = () => {
    report();
    void server.close().then(() => process.exit(0));
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  void main(process.argv.slice(2));
}
