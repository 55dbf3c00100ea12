// SandboxFusion's HTTP face: POST /run_code and POST /run_jupyter with its request and response shapes,
// so existing SandboxFusion clients work unchanged, plus GET /v1/ping ("pong", with the runs it takes at once in
// an `x-sandbox-workers` header, which our client sizes its gate by: capacity.ts) and GET /languages. Requests wait
// in the runner's bounded queue; when it is full the answer is 503 with Retry-After, which our client
// (and a load balancer) treats as "try another replica or later".
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { WORKERS_HEADER } from "./capacity.js";
import { SandboxBusyError, SandboxClosedError, type SandboxProblem, SandboxRequestError } from "./errors.js";
import { jupyterErrorResponse, parseRunJupyterRequest, runJupyter } from "./jupyter.js";
import { parseRunCodeRequest, sandboxErrorResponse } from "./request.js";
import { listLanguages } from "./toolchains.js";
import type { CodeRunner } from "./types.js";

export interface SandboxServerOptions {
  runner: CodeRunner;
  host?: string;
  port?: number;
  /** bodies larger than this are refused unread (413); JSON and base64 make a body ~1.4x its content */
  maxBodyBytes: number;
  /**
   * request bodies held at once (being read, queued or running) before new requests get 503: the
   * run queue bounds requests, this bounds the memory they take (default 1 GiB)
   */
  maxPendingBytes?: number;
  /** a client must send its whole request within this, ms (default 120 s); runs themselves are not cut */
  requestTimeoutMs?: number;
  /** the runner's sandbox.max_output_bytes, which /run_jupyter's cell results must fit (default 1 MiB) */
  maxOutputBytes?: number;
}

/** One run endpoint: how its body becomes a request, how it runs, and its SandboxError shape. */
interface RunRoute<Request> {
  parse(value: unknown): Request;
  run(request: Request, signal: AbortSignal): Promise<unknown>;
  refuse(message: string, problem?: SandboxProblem): object;
}

export interface SandboxServer {
  url: string;
  server: Server;
  close(): Promise<void>;
}

function sendJson(
  res: ServerResponse,
  status: number,
  value: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent || res.destroyed) return;
  const body = JSON.stringify(value);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
    ...headers,
  });
  res.end(body);
}

class BodyTooLargeError extends Error {}
class ServerBusyError extends Error {}

/** Bytes of request bodies the server holds; each request adds what it read and gives it back at its end. */
interface PendingBytes {
  held: number;
  limit: number;
}

function readBody(req: IncomingMessage, maxBytes: number, pending: PendingBytes): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"]);
    if (Number.isFinite(declared) && declared > maxBytes) {
      reject(new BodyTooLargeError());
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      pending.held -= size;
      chunks.length = 0;
      // stop reading; the answer goes out with `connection: close`, which ends the connection
      req.pause();
      reject(error);
    };
    req.on("data", (chunk: Buffer) => {
      if (settled) return;
      if (size + chunk.length > maxBytes) return fail(new BodyTooLargeError());
      if (pending.held + chunk.length > pending.limit) return fail(new ServerBusyError());
      pending.held += chunk.length;
      size += chunk.length;
      chunks.push(chunk);
    });
    req.on("end", () => {
      if (settled) return;
      settled = true;
      resolve(Buffer.concat(chunks));
    });
    req.on("error", fail);
    // a client that hangs up half-way (or a request timeout) never sends `end`
    req.on("close", () =>
      fail(new Error("the client closed the connection before its request was complete")),
    );
  });
}

async function handleRun<Request>(
  req: IncomingMessage,
  res: ServerResponse,
  options: SandboxServerOptions,
  pending: PendingBytes,
  route: RunRoute<Request>,
): Promise<void> {
  const busy = (message: string) =>
    sendJson(res, 503, route.refuse(message), { "retry-after": "1", connection: "close" });
  if (options.runner.saturated?.()) {
    busy("the sandbox is busy: every worker runs and the queue is full (sandbox.queue). Retry later.");
    return;
  }
  let body: Buffer;
  try {
    body = await readBody(req, options.maxBodyBytes, pending);
  } catch (error) {
    if (error instanceof ServerBusyError) {
      busy(`the sandbox server holds ${pending.limit} bytes of requests already. Retry later.`);
      return;
    }
    if (error instanceof BodyTooLargeError) {
      sendJson(
        res,
        413,
        route.refuse(
          `request body over ${options.maxBodyBytes} bytes; send smaller code, stdin and files or raise sandbox.max_request_bytes on the server`,
        ),
        { connection: "close" },
      );
      return;
    }
    throw error;
  }
  try {
    await runBody(body, res, route);
  } finally {
    pending.held -= body.length;
  }
}

async function runBody<Request>(body: Buffer, res: ServerResponse, route: RunRoute<Request>): Promise<void> {
  let request: Request;
  try {
    request = route.parse(JSON.parse(body.toString("utf8")));
  } catch (error) {
    const message =
      error instanceof SyntaxError ? `request body is not JSON: ${error.message}` : (error as Error).message;
    sendJson(res, 422, { detail: message, ...route.refuse(message) });
    return;
  }
  // A client that hangs up no longer needs the result: free the worker at once.
  const abort = new AbortController();
  res.on("close", () => {
    if (!res.writableFinished) abort.abort(new Error("client disconnected"));
  });
  try {
    sendJson(res, 200, await route.run(request, abort.signal));
  } catch (error) {
    if (error instanceof SandboxBusyError) {
      sendJson(res, 503, route.refuse(error.message), { "retry-after": "1" });
    } else if (error instanceof SandboxClosedError) {
      sendJson(res, 503, route.refuse("the sandbox server is shutting down; retry on another replica"), {
        "retry-after": "1",
      });
    } else if (error instanceof SandboxRequestError) {
      sendJson(res, 200, route.refuse(error.message, error.problem));
    } else if (!abort.signal.aborted) {
      sendJson(res, 500, route.refuse(`internal sandbox error: ${(error as Error).message}`));
    }
  }
}

export function startSandboxServer(options: SandboxServerOptions): Promise<SandboxServer> {
  const pending = { held: 0, limit: options.maxPendingBytes ?? 1 << 30 };
  // the toolchains do not change while the server runs; asking each of them costs ~17 processes
  let languages: ReturnType<typeof listLanguages> | null = null;
  const requestTimeout = options.requestTimeoutMs ?? 120_000;
  const runCode: RunRoute<ReturnType<typeof parseRunCodeRequest>> = {
    parse: parseRunCodeRequest,
    run: (request, signal) => options.runner.run(request, { signal }),
    refuse: sandboxErrorResponse,
  };
  const maxOutputBytes = options.maxOutputBytes ?? 1 << 20;
  const runNotebook: RunRoute<ReturnType<typeof parseRunJupyterRequest>> = {
    parse: parseRunJupyterRequest,
    run: (request, signal) => runJupyter(options.runner, request, { signal, maxOutputBytes }),
    refuse: jupyterErrorResponse,
  };
  // how often Node looks for requests past their timeout
  const connectionsCheckingInterval = Math.max(50, Math.min(30_000, requestTimeout / 4));
  const server = createServer({ connectionsCheckingInterval }, (req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    const route = `${req.method} ${path}`;
    const work = (async () => {
      if (route === "POST /run_code") return handleRun(req, res, options, pending, runCode);
      if (route === "POST /run_jupyter") return handleRun(req, res, options, pending, runNotebook);
      if (route === "GET /v1/ping" || route === "GET /ping") {
        const workers = options.runner.stats?.().workers;
        res
          .writeHead(200, {
            "content-type": "text/plain",
            ...(workers !== undefined ? { [WORKERS_HEADER]: String(workers) } : {}),
          })
          .end("pong");
        return;
      }
      if (route === "GET /languages") {
        languages ??= listLanguages();
        return sendJson(res, 200, await languages);
      }
      sendJson(res, 404, {
        detail: `no route ${route}; the sandbox serves POST /run_code, POST /run_jupyter, GET /v1/ping and GET /languages`,
      });
    })();
    work.catch((error: unknown) =>
      sendJson(
        res,
        500,
        (path === "/run_jupyter" ? jupyterErrorResponse : sandboxErrorResponse)(
          `internal sandbox error: ${(error as Error).message}`,
        ),
      ),
    );
  });
  // Node's request timeout covers receiving the request only, never the run that follows: a client
  // that trickles its body forever would otherwise hold a connection (and its bytes) forever.
  server.requestTimeout = requestTimeout;
  server.headersTimeout = Math.min(60_000, server.requestTimeout);
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 8080, options.host ?? "127.0.0.1", () => {
      const address = server.address() as AddressInfo;
      const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
      resolve({
        url: `http://${host}:${address.port}`,
        server,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
