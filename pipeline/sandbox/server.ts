// SandboxFusion's HTTP face: POST /run_code with its request and response shapes, so existing
// SandboxFusion clients work unchanged, plus GET /v1/ping ("pong") and GET /languages. Requests wait
// in the runner's bounded queue; when it is full the answer is 503 with Retry-After, which our client
// (and a load balancer) treats as "try another replica or later".
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { SandboxBusyError, SandboxClosedError, SandboxRequestError } from "./errors.js";
import { parseRunCodeRequest, sandboxErrorResponse } from "./request.js";
import { listLanguages } from "./toolchains.js";
import type { CodeRunner } from "./types.js";

export interface SandboxServerOptions {
  runner: CodeRunner;
  host?: string;
  port?: number;
  /** bodies larger than this are refused unread (413); JSON and base64 make a body ~1.4x its content */
  maxBodyBytes: number;
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

function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"]);
    if (Number.isFinite(declared) && declared > maxBytes) {
      reject(new BodyTooLargeError());
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        reject(new BodyTooLargeError());
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

async function handleRunCode(
  req: IncomingMessage,
  res: ServerResponse,
  options: SandboxServerOptions,
): Promise<void> {
  let body: Buffer;
  try {
    body = await readBody(req, options.maxBodyBytes);
  } catch (error) {
    if (error instanceof BodyTooLargeError) {
      sendJson(
        res,
        413,
        sandboxErrorResponse(
          `request body over ${options.maxBodyBytes} bytes; send smaller code, stdin and files or raise sandbox.max_request_bytes on the server`,
        ),
        { connection: "close" },
      );
      return;
    }
    throw error;
  }
  let request: ReturnType<typeof parseRunCodeRequest>;
  try {
    request = parseRunCodeRequest(JSON.parse(body.toString("utf8")));
  } catch (error) {
    const message =
      error instanceof SyntaxError ? `request body is not JSON: ${error.message}` : (error as Error).message;
    sendJson(res, 422, { detail: message, ...sandboxErrorResponse(message) });
    return;
  }
  // A client that hangs up no longer needs the result: free the worker at once.
  const abort = new AbortController();
  res.on("close", () => {
    if (!res.writableFinished) abort.abort(new Error("client disconnected"));
  });
  try {
    const response = await options.runner.run(request, { signal: abort.signal });
    sendJson(res, 200, response);
  } catch (error) {
    if (error instanceof SandboxBusyError) {
      sendJson(res, 503, sandboxErrorResponse(error.message), {
        "retry-after": String(error.retryAfterSeconds),
      });
    } else if (error instanceof SandboxClosedError) {
      sendJson(
        res,
        503,
        sandboxErrorResponse("the sandbox server is shutting down; retry on another replica"),
        {
          "retry-after": "1",
        },
      );
    } else if (error instanceof SandboxRequestError) {
      sendJson(res, 200, sandboxErrorResponse(error.message));
    } else if (!abort.signal.aborted) {
      sendJson(res, 500, sandboxErrorResponse(`internal sandbox error: ${(error as Error).message}`));
    }
  }
}

export function startSandboxServer(options: SandboxServerOptions): Promise<SandboxServer> {
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    const route = `${req.method} ${path}`;
    const work = (async () => {
      if (route === "POST /run_code") return handleRunCode(req, res, options);
      if (route === "GET /v1/ping" || route === "GET /ping") {
        res.writeHead(200, { "content-type": "text/plain" }).end("pong");
        return;
      }
      if (route === "GET /languages") return sendJson(res, 200, await listLanguages());
      sendJson(res, 404, {
        detail: `no route ${route}; the sandbox serves POST /run_code, GET /v1/ping and GET /languages`,
      });
    })();
    work.catch((error: unknown) =>
      sendJson(res, 500, sandboxErrorResponse(`internal sandbox error: ${(error as Error).message}`)),
    );
  });
  // Long compiles and runs must not be cut by Node's default request timeouts.
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;
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
