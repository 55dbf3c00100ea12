// A local Hugging Face hub for tests: serves a directory (`<owner>/<name>/<path>`) on 127.0.0.1
// through the endpoints `@huggingface/hub` calls (revision info, tree, `resolve` with Range, ETag,
// X-Repo-Commit), with latency and faults on demand (dropped connection, slow body, 401, 404, 5xx,
// corrupted bytes). With `writable` it takes pushes too (hub-writes.ts); an upload can be cut mid-body.

import { createReadStream } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Transform } from "node:stream";
import { DirectoryHub } from "../../pipeline/hub/directory-hub.js";
import { HubWrites } from "./hub-writes.js";

export type HubFault =
  /** answer with this status (and a hub-like JSON error) instead of the real answer */
  | { kind: "status"; status: number; match: string | RegExp; times?: number }
  /** send the headers and the first `afterBytes` bytes of the body, then cut the connection */
  | { kind: "drop"; afterBytes: number; match: string | RegExp; times?: number }
  /** flip one byte in the middle of the body */
  | { kind: "corrupt"; match: string | RegExp; times?: number }
  /** send the body at about this many bytes per second */
  | { kind: "slow"; bytesPerSecond: number; match: string | RegExp; times?: number }
  /** receive the first `afterBytes` bytes of an upload's body, then cut the connection */
  | { kind: "cut-upload"; afterBytes: number; match: string | RegExp; times?: number }
  /** receive an upload's body at about this many bytes per second (time to kill the client mid-upload) */
  | { kind: "slow-upload"; bytesPerSecond: number; match: string | RegExp; times?: number };

export interface TestHubOptions {
  root: string;
  /** when set, every request must carry `Authorization: Bearer <token>` or gets 401 */
  token?: string;
  /** delay before each answer */
  latencyMs?: number;
  faults?: HubFault[];
  /** a directory for uploaded objects and branches: the hub then accepts pushes (the default branch
   * is committed into `root`, which must then be a scratch directory) */
  writable?: string;
}

export interface LoggedRequest {
  method: string;
  url: string;
  range: string | undefined;
  status: number;
  /** body bytes handed to the socket so far */
  bytes: number;
  /** request body bytes received (uploads and commits) */
  bytesIn: number;
}

export interface TestHub {
  /** `http://127.0.0.1:PORT` */
  url: string;
  requests: LoggedRequest[];
  /** faults still armed; push more at any time */
  faults: HubFault[];
  directory: DirectoryHub;
  /** the write side (repositories, commits, LFS objects), when `writable` is set */
  writes: HubWrites | undefined;
  close(): Promise<void>;
}

function matches(fault: HubFault, url: string): boolean {
  return typeof fault.match === "string" ? url.includes(fault.match) : fault.match.test(url);
}

/** Takes the first armed fault matching `url`, counting down its `times`. */
function takeFault(faults: HubFault[], url: string): HubFault | undefined {
  const index = faults.findIndex((f) => matches(f, url));
  if (index < 0) return undefined;
  const fault = faults[index]!;
  if (fault.times !== undefined) {
    fault.times -= 1;
    if (fault.times <= 0) faults.splice(index, 1);
  }
  return fault;
}

function send(res: ServerResponse, log: LoggedRequest, chunk: Buffer): void {
  if (res.destroyed) return;
  log.bytes += chunk.length;
  res.write(chunk);
}

export async function startTestHub(options: TestHubOptions): Promise<TestHub> {
  const directory = new DirectoryHub(options.root);
  const faults = [...(options.faults ?? [])];
  const requests: LoggedRequest[] = [];
  const writes = options.writable === undefined ? undefined : new HubWrites(options.root, options.writable);

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = req.url ?? "/";
    const range = req.headers.range;
    const log: LoggedRequest = { method: req.method ?? "GET", url, range, status: 0, bytes: 0, bytesIn: 0 };
    requests.push(log);
    if (options.latencyMs) await new Promise((r) => setTimeout(r, options.latencyMs));

    // an upload URL is presigned, as the hub's storage URLs are: its ticket is the credential
    const presigned = writes !== undefined && url.startsWith("/lfs-upload/");
    const needsToken = options.token !== undefined || (writes !== undefined && log.method === "POST");
    const tokenOk =
      options.token !== undefined
        ? req.headers.authorization === `Bearer ${options.token}`
        : /^Bearer \S+$/.test(req.headers.authorization ?? "");
    if (!presigned && needsToken && !tokenOk) {
      log.status = 401;
      res.writeHead(401, { "content-type": "application/json", "x-error-code": "RepoNotFound" });
      res.end(JSON.stringify({ error: "Invalid credentials in Authorization header" }));
      return;
    }
    const fault = takeFault(faults, url);
    if (fault?.kind === "status") {
      log.status = fault.status;
      res.writeHead(fault.status, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: `injected HTTP ${fault.status}` }));
      return;
    }

    if (writes) {
      const cut =
        fault?.kind === "cut-upload"
          ? { afterBytes: fault.afterBytes }
          : fault?.kind === "slow-upload"
            ? { bytesPerSecond: fault.bytesPerSecond }
            : undefined;
      if (await writes.handle(req, res, log, cut)) return;
    }
    const reader = (await writes?.readerFor(url)) ?? directory;
    const answer = await reader.handle({ method: log.method, url, range });
    log.status = answer.status;
    res.writeHead(answer.status, answer.headers);
    if (answer.body === undefined || typeof answer.body === "string" || log.method === "HEAD") {
      res.end(typeof answer.body === "string" ? answer.body : undefined);
      return;
    }
    const { file, start, end } = answer.body;
    const length = end - start + 1;
    if (fault?.kind === "drop") {
      const stop = Math.min(end, start + fault.afterBytes - 1);
      for await (const chunk of createReadStream(file, { start, end: stop })) send(res, log, chunk as Buffer);
      setTimeout(() => res.socket?.destroy(), 10);
      return;
    }
    if (fault?.kind === "slow") {
      // a twentieth of the rate every 50 ms, until the body is sent or the client has gone
      const piece = Math.max(1, Math.floor(fault.bytesPerSecond / 20));
      for await (const chunk of createReadStream(file, { start, end, highWaterMark: piece })) {
        if (res.destroyed) break;
        send(res, log, chunk as Buffer);
        await new Promise((r) => setTimeout(r, 50));
      }
      res.end();
      return;
    }
    let body: NodeJS.ReadableStream = createReadStream(file, { start, end });
    if (fault?.kind === "corrupt" && length > 1) {
      const flipAt = Math.floor(length / 2);
      let seen = 0;
      body = body.pipe(
        new Transform({
          transform(chunk: Buffer, _encoding, done) {
            if (flipAt >= seen && flipAt < seen + chunk.length) {
              const copy = Buffer.from(chunk);
              copy[flipAt - seen] = copy[flipAt - seen]! ^ 0xff;
              chunk = copy;
            }
            seen += chunk.length;
            done(null, chunk);
          },
        }),
      );
    }
    body.on("data", (chunk: Buffer) => {
      log.bytes += chunk.length;
    });
    body.pipe(res);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: String(error) }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    faults,
    directory,
    writes,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
