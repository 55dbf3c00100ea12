// The `fetch` the LLM SDK and the sandbox client (/run_code) are given: node:http(s) with a
// keep-alive agent sized to the caller's concurrency, answering with a lean Response. Node's
// built-in fetch costs several times the CPU per request (WHATWG streams and headers on both
// sides), too much at hundreds of requests in flight (docs/llm.md).
import http, { type IncomingMessage } from "node:http";
import https from "node:https";
import { Readable } from "node:stream";
import zlib from "node:zlib";

type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

class LeanHeaders {
  constructor(private readonly raw: http.IncomingHttpHeaders) {}
  get(name: string): string | null {
    const value = this.raw[name.toLowerCase()];
    if (value === undefined) return null;
    return Array.isArray(value) ? value.join(", ") : value;
  }
  has(name: string): boolean {
    return this.raw[name.toLowerCase()] !== undefined;
  }
  *entries(): IterableIterator<[string, string]> {
    for (const name of Object.keys(this.raw)) yield [name, this.get(name)!];
  }
  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }
  forEach(callback: (value: string, name: string) => void): void {
    for (const [name, value] of this.entries()) callback(value, name);
  }
}

class LeanResponse {
  readonly status: number;
  readonly statusText: string;
  readonly ok: boolean;
  readonly url: string;
  readonly headers: LeanHeaders;
  readonly redirected = false;
  readonly type = "basic";
  private stream: Readable | undefined;
  /** the whole body, when it was read before the response was handed out */
  private readonly whole: Buffer | undefined;
  private consumed = false;

  constructor(url: string, message: IncomingMessage, body: Readable | Buffer) {
    this.url = url;
    this.status = message.statusCode ?? 0;
    this.statusText = message.statusMessage ?? "";
    this.ok = this.status >= 200 && this.status < 300;
    this.headers = new LeanHeaders(message.headers);
    if (Buffer.isBuffer(body)) this.whole = body;
    else this.stream = body;
  }

  get body(): Readable {
    this.stream ??= Readable.from(this.whole ? [this.whole] : []);
    return this.stream;
  }

  get bodyUsed(): boolean {
    return this.consumed;
  }

  text(): Promise<string> {
    if (this.consumed) return Promise.reject(new TypeError("the body has already been read"));
    this.consumed = true;
    if (this.whole) return Promise.resolve(this.whole.toString("utf8"));
    return readAll(this.body).then((buffer) => buffer.toString("utf8"));
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }
}

/** The whole stream; listeners rather than `for await`, which costs several promises per chunk. */
function readAll(stream: Readable): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    if (stream.errored) return reject(stream.errored);
    const chunks: Buffer[] = [];
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.once("error", reject);
    stream.once("end", () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
  });
}

function abortError(signal: AbortSignal): Error {
  const reason = signal.reason;
  if (reason instanceof Error && reason.name === "AbortError") return reason;
  return new DOMException("This operation was aborted", "AbortError");
}

function decoded(message: IncomingMessage): Readable {
  switch (message.headers["content-encoding"]) {
    case "gzip":
    case "x-gzip":
      return message.pipe(zlib.createGunzip());
    case "deflate":
      return message.pipe(zlib.createInflate());
    case "br":
      return message.pipe(zlib.createBrotliDecompress());
    default:
      return message;
  }
}

/**
 * Keeps fetch's contract where the SDK relies on it: the promise settles with the response headers,
 * the body is read by json()/text() or iterated (SSE); an aborted signal rejects with an AbortError;
 * a connection failure rejects with a TypeError whose cause is the socket error. One liberty: unless
 * the request asked for an event stream (Accept: text/event-stream) and got one, the body is read
 * whole before the promise settles, so the SDK's own timeout, which runs until `fetch` settles,
 * covers the whole answer. Deciding by the request means a server that answers a plain request with
 * a never-ending event stream still meets the deadline.
 */
export function createHttpFetch(maxSockets: number): { fetch: FetchLike; close(): void } {
  const options = { keepAlive: true, maxSockets, maxFreeSockets: maxSockets, scheduling: "lifo" as const };
  const agents = { "http:": new http.Agent(options), "https:": new https.Agent(options) };

  const fetch = (input: string | URL | Request, init: RequestInit = {}): Promise<Response> =>
    new Promise((resolve, reject) => {
      const url = new URL(typeof input === "string" || input instanceof URL ? input : input.url);
      const signal = init.signal ?? undefined;
      if (signal?.aborted) return reject(abortError(signal));
      const headers: Record<string, string> = {};
      const given = init.headers instanceof Headers ? init.headers : new Headers(init.headers);
      given.forEach((value, name) => {
        headers[name] = value;
      });
      const body = typeof init.body === "string" ? init.body : undefined;
      if (init.body != null && body === undefined) {
        return reject(new TypeError("this fetch sends string bodies only (JSON requests)"));
      }
      if (body !== undefined) headers["content-length"] = String(Buffer.byteLength(body));
      headers["accept-encoding"] ??= "gzip, deflate, br";
      const wantsStream = headers.accept?.includes("text/event-stream") === true;
      const transport = url.protocol === "https:" ? https : http;
      const agent = url.protocol === "https:" ? agents["https:"] : agents["http:"];
      let settled = false;
      let reading: Readable | undefined;
      const request = transport.request(url, { method: init.method ?? "GET", headers, agent }, (message) => {
        settled = true;
        const stream = decoded(message);
        reading = stream;
        // A body cut short (dropped connection, our abort) must fail the reader, not end quietly.
        message.on("aborted", () => stream.destroy(new TypeError("terminated")));
        message.on("close", () => {
          if (!message.complete)
            stream.destroy(signal?.aborted ? abortError(signal) : new TypeError("terminated"));
        });
        const eventStream = message.headers["content-type"]?.startsWith("text/event-stream") === true;
        if (eventStream && wantsStream) {
          resolve(new LeanResponse(url.href, message, stream) as unknown as Response);
          return;
        }
        readAll(stream).then(
          (whole) => resolve(new LeanResponse(url.href, message, whole) as unknown as Response),
          (error: unknown) => {
            if (signal?.aborted) reject(abortError(signal));
            else reject(error instanceof TypeError ? error : new TypeError("terminated", { cause: error }));
          },
        );
      });
      const onAbort = () => {
        // The reader of the body must see the abort itself, not the reset it causes.
        reading?.destroy(abortError(signal!));
        request.destroy(abortError(signal!));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      request.on("close", () => signal?.removeEventListener("abort", onAbort));
      request.on("error", (error) => {
        if (settled) return;
        settled = true;
        if (signal?.aborted) reject(abortError(signal));
        else reject(new TypeError("fetch failed", { cause: error }));
      });
      request.end(body);
    });

  return {
    fetch,
    close() {
      agents["http:"].destroy();
      agents["https:"].destroy();
    },
  };
}
