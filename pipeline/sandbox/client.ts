// A CodeRunner that sends requests to a remote SandboxFusion-compatible POST /run_code: our own
// `pipeline sandbox serve`, or a SandboxFusion deployment. Replicas behind a load balancer are how
// sandbox work grows past one machine, so the client retries what a busy or restarting replica
// answers (connection errors, 429, 5xx) with backoff, and honours Retry-After.
import pLimit from "p-limit";
import type { SandboxConfig } from "./config.js";
import { SandboxClosedError, SandboxRemoteError } from "./errors.js";
import { sandboxErrorResponse } from "./request.js";
import type { CodeRunner, CommandRunResult, RunCodeRequest, RunCodeResponse } from "./types.js";

const RUN_STATUSES = new Set(["Success", "Failed", "SandboxError"]);

/** `http://host:port` or `http://host:port/prefix` -> the /run_code endpoint under it. */
export function runCodeEndpoint(url: string): string {
  const trimmed = url.replace(/\/+$/, "");
  return trimmed.endsWith("/run_code") ? trimmed : `${trimmed}/run_code`;
}

function normalizeResult(value: unknown): CommandRunResult | null {
  if (value === null || typeof value !== "object") return null;
  return value as CommandRunResult;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}

export class HttpSandboxClient implements CodeRunner {
  readonly endpoint: string;
  private readonly limit: ReturnType<typeof pLimit>;
  private closed = false;
  private readonly controller = new AbortController();

  constructor(private readonly config: SandboxConfig) {
    if (!config.url) throw new Error("HttpSandboxClient needs sandbox.url");
    this.endpoint = runCodeEndpoint(config.url);
    this.limit = pLimit(config.workers ?? 64);
  }

  run(request: RunCodeRequest, options?: { signal?: AbortSignal }): Promise<RunCodeResponse> {
    if (this.closed) return Promise.reject(new SandboxClosedError());
    return this.limit(() => this.send(request, options?.signal));
  }

  async close(): Promise<void> {
    this.closed = true;
    this.controller.abort(new SandboxClosedError());
  }

  private async send(request: RunCodeRequest, signal?: AbortSignal): Promise<RunCodeResponse> {
    const body = JSON.stringify(request);
    // The server may queue the request, then compile and run it: wait for both timeouts and slack.
    const budget =
      (request.compile_timeout ?? this.config.compile_timeout_s) +
      (request.run_timeout ?? this.config.run_timeout_s) +
      this.config.client_slack_s;
    let lastError: unknown = null;
    for (let attempt = 0; attempt <= this.config.client_retries; attempt++) {
      const signals = [this.controller.signal, AbortSignal.timeout(budget * 1000)];
      if (signal) signals.push(signal);
      let response: Response;
      try {
        response = await fetch(this.endpoint, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body,
          signal: AbortSignal.any(signals),
        });
      } catch (error) {
        if (signal?.aborted || this.controller.signal.aborted) throw error;
        lastError = error;
        await sleep(backoffMs(attempt), signal);
        continue;
      }
      const text = await response.text();
      if (response.status === 429 || response.status >= 500) {
        lastError = new SandboxRemoteError(
          `${this.endpoint} answered HTTP ${response.status}: ${text.slice(0, 300)}`,
          this.endpoint,
          response.status,
        );
        const retryAfter = Number(response.headers.get("retry-after"));
        await sleep(
          Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : backoffMs(attempt),
          signal,
        );
        continue;
      }
      if (response.status >= 400) {
        // The server refused this request (SandboxFusion answers 422 for an unknown language).
        return sandboxErrorResponse(
          `${this.endpoint} refused the request (HTTP ${response.status}): ${text.slice(0, 500)}`,
        );
      }
      return this.parse(text);
    }
    const reason = lastError instanceof Error ? lastError.message : String(lastError);
    throw new SandboxRemoteError(
      `could not reach the sandbox server at ${this.endpoint} after ${this.config.client_retries + 1} attempts (${reason}). Check that it runs (pnpm pipeline sandbox serve) and that sandbox.url is right.`,
      this.endpoint,
      lastError instanceof SandboxRemoteError ? lastError.status : null,
      { cause: lastError },
    );
  }

  private parse(text: string): RunCodeResponse {
    let value: Record<string, unknown>;
    try {
      value = JSON.parse(text) as Record<string, unknown>;
    } catch (error) {
      throw new SandboxRemoteError(
        `${this.endpoint} answered something that is not JSON: ${text.slice(0, 200)}`,
        this.endpoint,
        200,
        {
          cause: error,
        },
      );
    }
    if (typeof value !== "object" || value === null || !RUN_STATUSES.has(String(value.status))) {
      throw new SandboxRemoteError(
        `${this.endpoint} answered JSON without a SandboxFusion status: ${text.slice(0, 200)}; is sandbox.url a /run_code server?`,
        this.endpoint,
        200,
      );
    }
    return {
      ...(value as object),
      status: value.status as RunCodeResponse["status"],
      message: typeof value.message === "string" ? value.message : "",
      compile_result: normalizeResult(value.compile_result),
      run_result: normalizeResult(value.run_result),
      files: (value.files as Record<string, string> | undefined) ?? {},
    };
  }
}

function backoffMs(attempt: number): number {
  return Math.min(10_000, 250 * 2 ** attempt) * (0.5 + Math.random() / 2);
}
