// The `fetch` handed to `@huggingface/hub`: adds the token (only for the configured endpoint), a
// time limit on each response's start, retries with backoff for network errors, 5xx and 429, and maps
// `file:` endpoints onto a DirectoryHub so offline samples take the same path as the real hub.

import { createReadStream } from "node:fs";
import { Readable } from "node:stream";
import { pathToFileURL } from "node:url";
import { sleep } from "../abort.js";
import type { DirectoryHub, HubResponse } from "./directory-hub.js";

export interface HubFetchOptions {
  /** the base URL the client builds its URLs on */
  base: string;
  token: string | undefined;
  timeoutMs: number;
  retries: number;
  backoffMs: number;
  signal?: AbortSignal | undefined;
  /** answers requests in-process instead of over the network (the `file:` endpoint) */
  directory?: DirectoryHub | undefined;
  onRetry?: ((attempt: number, reason: string) => void) | undefined;
}

/** `file:DIR` (or `file:///abs/DIR`) to the directory, else undefined. */
export function directoryOfEndpoint(endpoint: string): string | undefined {
  if (!endpoint.startsWith("file:")) return undefined;
  if (endpoint.startsWith("file://")) return decodeURIComponent(new URL(endpoint).pathname);
  return endpoint.slice("file:".length);
}

/** The base URL for a `file:` endpoint: a normalized file URL, so the client's URLs start with it verbatim. */
export function fileBase(directory: string): string {
  return pathToFileURL(directory).href.replace(/\/+$/, "");
}

export function createHubFetch(options: HubFetchOptions): typeof fetch {
  const { base, directory } = options;
  const hubFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const headers = new Headers(init?.headers);
    const ownHost = url === base || url.startsWith(`${base}/`);
    if (options.token && ownHost && !headers.has("authorization")) {
      headers.set("authorization", `Bearer ${options.token}`);
    }
    let lastError: unknown;
    for (let attempt = 0; attempt <= options.retries; attempt++) {
      if (attempt > 0) await sleep(options.backoffMs * 2 ** (attempt - 1), options.signal);
      const timeout = new AbortController();
      const timer = setTimeout(
        () => timeout.abort(new Error(`no response within ${options.timeoutMs / 1000}s`)),
        options.timeoutMs,
      );
      const signals = [timeout.signal, ...(options.signal ? [options.signal] : [])];
      try {
        const response = directory
          ? await answerFromDirectory(directory, url.slice(base.length), init?.method ?? "GET", headers)
          : await fetch(url, { ...init, headers, signal: AbortSignal.any(signals) });
        const retriable = response.status === 429 || response.status >= 500;
        if (!retriable || attempt === options.retries) return response;
        lastError = new Error(`HTTP ${response.status}`);
        await response.body?.cancel();
      } catch (error) {
        if (options.signal?.aborted) throw error;
        lastError = error;
        if (attempt === options.retries) throw error;
      } finally {
        clearTimeout(timer);
      }
      options.onRetry?.(attempt + 1, lastError instanceof Error ? lastError.message : String(lastError));
    }
    throw lastError;
  };
  return hubFetch as typeof fetch;
}

async function answerFromDirectory(
  directory: DirectoryHub,
  url: string,
  method: string,
  headers: Headers,
): Promise<Response> {
  const answer: HubResponse = await directory.handle({
    method,
    url,
    range: headers.get("range") ?? undefined,
  });
  let body: string | ReadableStream<Uint8Array> | null = null;
  if (typeof answer.body === "string") body = answer.body;
  else if (answer.body && method !== "HEAD") {
    const { file, start, end } = answer.body;
    body = Readable.toWeb(createReadStream(file, { start, end })) as ReadableStream<Uint8Array>;
  }
  return new Response(body, { status: answer.status, headers: answer.headers });
}
