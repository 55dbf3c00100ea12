// Shared set-up for LLM tests: a service pointed at a test server, in a temporary data dir.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import type { HubConfig } from "../../pipeline/hub/config.js";
import { type LlmConfig, llmConfigSchema } from "../../pipeline/llm/config.js";
import { createLlmService, type LlmService } from "../../pipeline/llm/index.js";
import type { ChatMessage } from "../../pipeline/llm/types.js";
import type { Logger } from "../../pipeline/log.js";
import { type LlmServer, type LlmServerOptions, startLlmServer } from "../support/llm-server.js";
import { tempDir } from "../support/temp-dir.js";

export interface ServerPerTest {
  readonly server: LlmServer;
  /** a fresh temporary data dir */
  readonly dir: string;
}

/**
 * A test LLM server (with a copy of `options`, which tests may change) and an empty data dir for
 * every test of the file, closed and removed after it.
 */
export function serverPerTest(options: LlmServerOptions = {}, prefix = "cf-llm-"): ServerPerTest {
  let server: LlmServer | undefined;
  let dir: string | undefined;
  beforeEach(async () => {
    server = await startLlmServer({ ...options });
    dir = tempDir(prefix);
  });
  afterEach(async () => {
    await server?.close();
  });
  return {
    get server() {
      return server!;
    },
    get dir() {
      return dir!;
    },
  };
}

/** One user message. */
export const ask = (text: string): ChatMessage[] => [{ role: "user", content: text }];

/** Every file under `dir` (cache database and its WAL, manifests, outputs) whose bytes contain `text`. */
export function filesContaining(dir: string, text: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    if (readFileSync(path).includes(text)) found.push(path);
  }
  return found;
}

/** How many files there are under `dir`, so a check over them is known not to be vacuous. */
export function fileCount(dir: string): number {
  return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).length;
}

/** A logger that keeps every line, to check what users would see (and that no key is in it). */
export function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    info: (m) => lines.push(`info: ${m}`),
    warn: (m) => lines.push(`warn: ${m}`),
    debug: (m) => lines.push(`debug: ${m}`),
  };
}

/**
 * A scorer role against `url` (none: not configured) with fast retries, so fault tests finish quickly.
 * Its provider is `openai`: without a URL it is an unconfigured server, never the embedded model.
 */
export function testConfig(
  url: string | undefined,
  scorer: Record<string, unknown> = {},
  extra: object = {},
): LlmConfig {
  return llmConfigSchema.parse({
    scorer: {
      provider: "openai",
      ...(url ? { base_url: url } : {}),
      model: "test-model",
      retries: 3,
      backoff_s: 0.01,
      max_backoff_s: 0.05,
      timeout_s: 2,
      ...scorer,
    },
    ...extra,
  });
}

export interface TestServiceOptions {
  noCache?: boolean;
  /** a recording logger by default */
  log?: Logger;
  /** none by default: nothing from this process's environment */
  env?: Record<string, string | undefined>;
  /** where an embedded role fetches its model from */
  hub?: HubConfig;
}

export function testService(
  config: LlmConfig,
  dataDir: string,
  options: TestServiceOptions = {},
): LlmService {
  return createLlmService(config, {
    dataDir,
    noCache: options.noCache ?? false,
    log: options.log ?? recordingLogger(),
    env: options.env ?? {},
    hub: options.hub,
  });
}
