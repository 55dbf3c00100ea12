// Shared set-up for LLM tests: a service pointed at a test server, in a temporary data dir.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type LlmConfig, llmConfigSchema } from "../../pipeline/llm/config.js";
import { createLlmService, type LlmService } from "../../pipeline/llm/index.js";
import type { Logger } from "../../pipeline/log.js";

export function tempDir(prefix = "cf-llm-"): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
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

/** A scorer role against `url` with fast retries, so fault tests finish quickly. */
export function testConfig(url: string, scorer: Record<string, unknown> = {}, extra: object = {}): LlmConfig {
  return llmConfigSchema.parse({
    scorer: {
      base_url: url,
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

export function testService(
  config: LlmConfig,
  dataDir: string,
  options: { noCache?: boolean; log?: Logger; env?: Record<string, string | undefined> } = {},
): LlmService {
  return createLlmService(config, {
    dataDir,
    noCache: options.noCache ?? false,
    log: options.log ?? recordingLogger(),
    env: options.env ?? {},
  });
}
