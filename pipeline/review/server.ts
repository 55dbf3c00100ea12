// The review app over HTTP (node:http, no framework): one page, a JSON API to read, and one write,
// POST /api/marks. Model-written text reaches the page only as JSON the page puts in as text, under a
// Content-Security-Policy that runs no script but the page's own. Off loopback every request must
// carry the token; on loopback the Host header must name loopback (a rebound DNS name cannot reach it).
import { randomBytes, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { UserError } from "../errors.js";
import type { ReviewApp } from "./app.js";
import { pageHtml } from "./page.js";
import { FILTERS, type Filter, type Kind, NotFound, SORTS, type Sort } from "./records.js";

export interface ServeOptions {
  host: string;
  port: number;
  /** required off loopback: every request carries it (`Authorization: Bearer`, or `?token=` for the page) */
  token?: string | undefined;
  /** the name the page puts on marks until the reviewer changes it */
  reviewer: string;
  /** the stage the page opens on */
  stage: string;
  /** ids to walk through, in order (`--sample`) */
  queue?: readonly string[];
}

export interface ReviewServer {
  url: string;
  close(): Promise<void>;
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|localhost|::1|\[::1\])$/;
const MAX_BODY = 64 * 1024;

const asset = (name: string) => readFileSync(new URL(`./page/${name}`, import.meta.url), "utf8");

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function send(
  res: ServerResponse,
  status: number,
  type: string,
  body: string,
  extra: Record<string, string> = {},
) {
  res.writeHead(status, {
    "Content-Type": type,
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    ...extra,
  });
  res.end(body);
}

const json = (res: ServerResponse, status: number, value: unknown) =>
  send(res, status, "application/json; charset=utf-8", JSON.stringify(value));

function sameSecret(given: string | undefined, token: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

async function body(req: IncomingMessage): Promise<unknown> {
  if (!(req.headers["content-type"] ?? "").startsWith("application/json"))
    throw new HttpError(415, "send the mark as application/json");
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new HttpError(413, "a mark is at most 64 KiB");
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    throw new HttpError(400, "the body is not JSON");
  }
}

const kindOf = (value: string | null): Kind => (value === "r" ? "r" : "o");

async function handle(app: ReviewApp, options: ServeOptions, req: IncomingMessage, res: ServerResponse) {
  const url = new URL(req.url ?? "/", "http://review.invalid");
  const host = (req.headers.host ?? "").replace(/:\d+$/, "");
  if (LOOPBACK.test(options.host) && !LOOPBACK.test(host))
    throw new HttpError(403, "this app answers only requests addressed to loopback");
  if (options.token) {
    const auth = req.headers.authorization;
    const given = auth?.startsWith("Bearer ") ? auth.slice(7) : (url.searchParams.get("token") ?? undefined);
    if (!sameSecret(given, options.token)) throw new HttpError(401, "a valid token is required");
  }
  const q = (name: string) => url.searchParams.get(name) ?? undefined;
  if (req.method === "POST" && url.pathname === "/api/marks") {
    const input = (await body(req)) as Record<string, unknown>;
    const text = (key: string) => (typeof input[key] === "string" ? (input[key] as string) : undefined);
    const made = app.mark({
      stage: text("stage") ?? options.stage,
      id: text("id") ?? "",
      verdict: text("verdict") ?? "",
      reason: text("reason"),
      note: text("note"),
      reviewer: text("reviewer") ?? options.reviewer,
    });
    return json(res, 201, made);
  }
  if (req.method !== "GET" && req.method !== "HEAD") throw new HttpError(405, "only marks are written");
  switch (url.pathname) {
    case "/": {
      const nonce = randomBytes(16).toString("base64");
      const config = {
        stage: options.stage,
        reviewer: options.reviewer,
        reasons: app.reasons,
        queue: options.queue ?? null,
        dataDir: app.source.dataDir,
        hasRuns: app.hasRuns(),
      };
      // inside a <script> element, `<` must not start a tag: JSON allows it escaped
      const data = JSON.stringify(config).replace(/</g, "\\u003c");
      const page = pageHtml(nonce, data, asset("app.css"), asset("app.js"));
      return send(res, 200, "text/html; charset=utf-8", page, {
        "Content-Security-Policy": `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
      });
    }
    case "/api/stages":
      return json(res, 200, app.stages());
    case "/api/facets":
      return json(res, 200, app.facets(q("stage") ?? options.stage, kindOf(url.searchParams.get("kind"))));
    case "/api/list": {
      const filter: Filter = {};
      for (const key of FILTERS) {
        const value = q(key);
        if (value) filter[key] = value;
      }
      const sort = q("sort");
      return json(
        res,
        200,
        app.list(q("stage") ?? options.stage, kindOf(url.searchParams.get("kind")), filter, {
          ...(sort && (SORTS as readonly string[]).includes(sort) ? { sort: sort as Sort } : {}),
          page: Number(q("page") ?? 0) || 0,
          size: Number(q("size") ?? 50) || 50,
        }),
      );
    }
    case "/api/record": {
      const kind = q("kind");
      return json(
        res,
        200,
        app.record(
          q("stage") ?? options.stage,
          q("id") ?? "",
          kind === "o" || kind === "r" ? kind : undefined,
        ),
      );
    }
    case "/api/queue":
      return json(res, 200, { ids: options.queue ?? null });
    default:
      throw new HttpError(404, `nothing at ${url.pathname}`);
  }
}

/** Starts the app; a taken port or a missing token off loopback is the user's error (exit 2). */
export async function serveReview(app: ReviewApp, options: ServeOptions): Promise<ReviewServer> {
  if (!LOOPBACK.test(options.host) && !options.token) {
    throw new UserError(
      `--host ${options.host} is reachable from other machines: give --token (or $CODEFEEDBACK_REVIEW_TOKEN), which every request must carry`,
    );
  }
  const server = createServer((req, res) => {
    handle(app, options, req, res).catch((error: unknown) => {
      const status =
        error instanceof HttpError
          ? error.status
          : error instanceof NotFound
            ? 404
            : error instanceof UserError
              ? 400
              : 500;
      if (!res.headersSent) json(res, status, { error: (error as Error).message });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "EADDRINUSE")
        reject(
          new UserError(
            `port ${options.port} is in use on ${options.host}: give another with --port (0: any free one)`,
          ),
        );
      else if (error.code === "EACCES")
        reject(new UserError(`port ${options.port} may not be used by this user: give another with --port`));
      else reject(error);
    });
    server.listen(options.port, options.host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  const hostPart = options.host.includes(":") ? `[${options.host}]` : options.host;
  return {
    url: `http://${hostPart}:${port}/${options.token ? `?token=${encodeURIComponent(options.token)}` : ""}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
