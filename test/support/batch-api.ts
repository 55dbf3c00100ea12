// The OpenAI Files and Batches protocol for the test LLM server (llm-server.ts `batch`): upload, list,
// retrieve, cancel, output and error files, and a batch's states, each reached after a share of
// `delayMs`. Its lines are answered by the server's rules and counted with its chat requests. Faults
// on demand: failed lines, expiry with partial output, failed validation, lost polls, 5xx on upload.
import type { IncomingMessage, ServerResponse } from "node:http";
import { sendJson } from "./llm-faults.js";

export interface BatchApiOptions {
  /** milliseconds from creation to the end state (default 0: done at the first poll) */
  delayMs?: number;
  /** a line's fate: `fail` puts it in the error file (a 500 from the model) */
  lineFault?: (body: LineBody, attempt: number) => "fail" | undefined;
  /** a batch's end other than `completed`: `answered` lines are in its output, the rest expired */
  end?: (batch: ServerBatch) => { status: "expired" | "failed"; answered?: number } | undefined;
  /** the n-th upload (from 1) gets a 503 */
  uploadFault?: (n: number) => boolean;
  /** the n-th retrieve (from 1) gets a 500 ("a lost poll") */
  pollFault?: (n: number) => boolean;
  /**
   * Never answers at this step, so that a test can kill the client there: `upload` (the file is
   * stored), `create` (before the batch exists), `created` (after it exists), `content` (a download).
   */
  hang?: (step: HangStep) => boolean;
}

export type HangStep = "upload" | "create" | "created" | "content";

export interface LineBody {
  model: string;
  messages: { role: string; content: string }[];
  [key: string]: unknown;
}

export interface ServerBatch {
  id: string;
  object: "batch";
  endpoint: string;
  input_file_id: string;
  completion_window: string;
  status: string;
  created_at: number;
  metadata: Record<string, string> | null;
  output_file_id?: string;
  error_file_id?: string;
  errors?: { object: "list"; data: { code: string; message: string; line?: number }[] };
  request_counts: { total: number; completed: number; failed: number };
  /** ms (performance.now) it was created at; not part of the protocol */
  createdMs: number;
  cancelled: boolean;
}

interface ServerFile {
  id: string;
  object: "file";
  bytes: number;
  created_at: number;
  filename: string;
  purpose: string;
  text: string;
}

export interface BatchApi {
  readonly files: Map<string, ServerFile>;
  readonly batches: Map<string, ServerBatch>;
  /** uploads and retrieves received, faulty ones included */
  readonly uploads: number;
  readonly polls: number;
  /** the step a request hangs at, once one does */
  readonly hanging: HangStep | undefined;
  /** forgets every file, batch and count */
  reset(): void;
  /** true when it took the request */
  handle(req: IncomingMessage, res: ServerResponse, raw: Buffer): Promise<boolean>;
}

/** answers one line like the chat route would: the completion body, counted as a request */
export type AnswerLine = (body: LineBody) => object;

export function createBatchApi(options: BatchApiOptions, answer: AnswerLine): BatchApi {
  const files = new Map<string, ServerFile>();
  const batches = new Map<string, ServerBatch>();
  const attempts = new Map<string, number>();
  let uploads = 0;
  let polls = 0;
  let hanging: HangStep | undefined;
  const hangs = (step: HangStep) => {
    if (!options.hang?.(step)) return false;
    hanging = step;
    return true;
  };
  let ids = 0;
  const now = () => Math.floor(Date.now() / 1000);
  const addFile = (filename: string, purpose: string, text: string): ServerFile => {
    const file = {
      id: `file-${++ids}`,
      object: "file" as const,
      bytes: Buffer.byteLength(text),
      created_at: now(),
      filename,
      purpose,
      text,
    };
    files.set(file.id, file);
    return file;
  };
  const shown = (f: ServerFile) => {
    const { text: _, ...rest } = f;
    return rest;
  };
  const shownBatch = (b: ServerBatch) => {
    const { createdMs: _, cancelled: __, ...rest } = b;
    return rest;
  };

  /** Moves a batch on to where its age says it is; answers its lines when it ends. */
  const advance = (batch: ServerBatch) => {
    if (["completed", "failed", "expired", "cancelled"].includes(batch.status)) return;
    const share = options.delayMs ? (performance.now() - batch.createdMs) / options.delayMs : 1;
    if (!batch.cancelled && share < 1) {
      batch.status = share < 1 / 3 ? "validating" : share < 2 / 3 ? "in_progress" : "finalizing";
      return;
    }
    const lines = files
      .get(batch.input_file_id)!
      .text.split("\n")
      .filter((l) => l.trim() !== "")
      .map((l) => JSON.parse(l) as { custom_id: string; body: LineBody });
    const end = batch.cancelled ? { status: "cancelled" as const, answered: 0 } : options.end?.(batch);
    if (end?.status === "failed") {
      batch.status = "failed";
      batch.errors = {
        object: "list",
        data: [{ code: "invalid_request", message: "injected: the input file failed validation", line: 1 }],
      };
      return;
    }
    const answered = end ? (end.answered ?? 0) : lines.length;
    const out: string[] = [];
    const errors: string[] = [];
    lines.forEach((line, i) => {
      const reqId = `batch_req_${batch.id}_${i}`;
      if (i >= answered) {
        errors.push(
          JSON.stringify({
            id: reqId,
            custom_id: line.custom_id,
            response: null,
            error: {
              code: `batch_${end!.status}`,
              message: `This request could not be executed before the batch was ${end!.status}.`,
            },
          }),
        );
        return;
      }
      const seen = (attempts.get(line.custom_id) ?? 0) + 1;
      attempts.set(line.custom_id, seen);
      if (options.lineFault?.(line.body, seen) === "fail") {
        errors.push(
          JSON.stringify({
            id: reqId,
            custom_id: line.custom_id,
            response: {
              status_code: 500,
              request_id: reqId,
              body: { error: { message: "injected: the model failed", type: "server_error" } },
            },
            error: null,
          }),
        );
        return;
      }
      out.push(
        JSON.stringify({
          id: reqId,
          custom_id: line.custom_id,
          response: { status_code: 200, request_id: reqId, body: answer(line.body) },
          error: null,
        }),
      );
    });
    batch.status = end?.status ?? "completed";
    batch.request_counts = { total: lines.length, completed: out.length, failed: errors.length };
    if (out.length)
      batch.output_file_id = addFile(`${batch.id}_output.jsonl`, "batch_output", `${out.join("\n")}\n`).id;
    if (errors.length)
      batch.error_file_id = addFile(`${batch.id}_error.jsonl`, "batch_output", `${errors.join("\n")}\n`).id;
  };

  const notFound = (res: ServerResponse, what: string) => {
    sendJson(res, 404, { error: { message: `No such ${what}`, type: "invalid_request_error" } });
    return true;
  };

  return {
    files,
    batches,
    get uploads() {
      return uploads;
    },
    get polls() {
      return polls;
    },
    get hanging() {
      return hanging;
    },
    reset() {
      files.clear();
      batches.clear();
      attempts.clear();
      uploads = 0;
      polls = 0;
      hanging = undefined;
    },
    async handle(req, res, raw) {
      const url = new URL(req.url ?? "/", "http://localhost");
      const path = url.pathname.replace(/^\/v1/, "");
      const method = req.method ?? "GET";
      if (path === "/files" && method === "POST") {
        uploads++;
        if (options.uploadFault?.(uploads)) {
          sendJson(res, 503, { error: { message: "injected: upload failed", type: "server_error" } });
          return true;
        }
        const form = await new Request("http://localhost/", {
          method: "POST",
          headers: { "content-type": req.headers["content-type"] ?? "" },
          body: raw,
        }).formData();
        const file = form.get("file");
        if (!(file instanceof Blob)) {
          sendJson(res, 400, { error: { message: "no file", type: "invalid_request_error" } });
          return true;
        }
        const name = (file as File).name ?? "upload.jsonl";
        const stored = addFile(name, String(form.get("purpose") ?? ""), await file.text());
        if (hangs("upload")) return true;
        sendJson(res, 200, shown(stored));
        return true;
      }
      if (path === "/files" && method === "GET") {
        const purpose = url.searchParams.get("purpose");
        const data = [...files.values()].filter((f) => !purpose || f.purpose === purpose).map(shown);
        sendJson(res, 200, { object: "list", data, has_more: false });
        return true;
      }
      const content = /^\/files\/([^/]+)\/content$/.exec(path);
      if (content && method === "GET") {
        const file = files.get(content[1]!);
        if (!file) return notFound(res, "file");
        if (hangs("content")) return true;
        res.writeHead(200, { "content-type": "application/octet-stream" });
        res.end(file.text);
        return true;
      }
      if (path === "/batches" && method === "POST") {
        const body = JSON.parse(raw.toString("utf8")) as {
          input_file_id: string;
          endpoint: string;
          completion_window: string;
          metadata?: Record<string, string>;
        };
        const input = files.get(body.input_file_id);
        if (!input) return notFound(res, "file");
        if (hangs("create")) return true;
        const batch: ServerBatch = {
          id: `batch_${++ids}`,
          object: "batch",
          endpoint: body.endpoint,
          input_file_id: body.input_file_id,
          completion_window: body.completion_window,
          status: "validating",
          created_at: now(),
          metadata: body.metadata ?? null,
          request_counts: { total: input.text.split("\n").filter(Boolean).length, completed: 0, failed: 0 },
          createdMs: performance.now(),
          cancelled: false,
        };
        batches.set(batch.id, batch);
        if (hangs("created")) return true;
        sendJson(res, 200, shownBatch(batch));
        return true;
      }
      if (path === "/batches" && method === "GET") {
        // newest first, paged by `after` like the real one
        const all = [...batches.values()].reverse();
        const after = url.searchParams.get("after");
        const start = after ? all.findIndex((b) => b.id === after) + 1 : 0;
        const limit = Number(url.searchParams.get("limit") ?? 20);
        const page = all.slice(start, start + limit);
        for (const b of page) advance(b);
        sendJson(res, 200, {
          object: "list",
          data: page.map(shownBatch),
          first_id: page[0]?.id ?? null,
          last_id: page.at(-1)?.id ?? null,
          has_more: start + limit < all.length,
        });
        return true;
      }
      const one = /^\/batches\/([^/]+)(\/cancel)?$/.exec(path);
      if (one) {
        const batch = batches.get(one[1]!);
        if (!batch) return notFound(res, "batch");
        if (one[2] && method === "POST") {
          batch.cancelled = true;
          advance(batch);
        } else {
          polls++;
          if (options.pollFault?.(polls)) {
            sendJson(res, 500, { error: { message: "injected: lost poll", type: "server_error" } });
            return true;
          }
          advance(batch);
        }
        sendJson(res, 200, shownBatch(batch));
        return true;
      }
      return false;
    },
  };
}
