// What the embedded-provider tests share: a tiny random-weight GGUF model in a model repository of a
// local test hub (so the download, load, generate, grammar and cache paths run as with a real model,
// offline), and LLM configs whose scorer runs it.
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { HubClient } from "../../../pipeline/hub/client.js";
import { hubConfigSchema } from "../../../pipeline/hub/config.js";
import { type LlmConfig, llmConfigSchema } from "../../../pipeline/llm/config.js";
import type { LlmService } from "../../../pipeline/llm/index.js";
import { startTestHub, type TestHub } from "../../support/hub-server.js";
import { tempDir } from "../../support/temp-dir.js";
import { writeLlamaGguf } from "../../support/tiny-gguf.js";
import { type TestServiceOptions, testService } from "../helpers.js";

export const REPO = "test-org/tiny-llama-GGUF";
export const FILE = "tiny-llama-f32.gguf";

export interface TinyModelHub {
  readonly hub: TestHub;
  /** the commit the test hub reports for REPO */
  readonly commit: string;
  /** the GGUF file as written, for tests that load it from a path */
  readonly localFile: string;
  /** the `embedded` section fetching REPO/FILE from the test hub */
  embedded(extra?: Record<string, unknown>): Record<string, unknown>;
}

/** Writes the model into a hub directory and serves it for the whole test file. */
export function useTinyModelHub(): TinyModelHub {
  const root = tempDir("cf-gguf-hub-");
  let hub: TestHub | undefined;
  let commit = "";
  const localFile = join(root, ...REPO.split("/"), FILE);
  beforeAll(async () => {
    writeLlamaGguf(localFile);
    hub = await startTestHub({ root });
    commit = await new HubClient(hubConfigSchema.parse({ endpoint: hub.url })).resolveCommit(
      REPO,
      "main",
      "model",
    );
  });
  afterAll(async () => {
    await hub?.close();
  });
  return {
    get hub() {
      return hub!;
    },
    get commit() {
      return commit;
    },
    localFile,
    embedded: (extra = {}) => ({
      repo: REPO,
      revision: "main",
      file: FILE,
      hub_endpoint: hub!.url,
      sequences: 2,
      context_size: 512,
      // One thread: the tiny model gains nothing from more, and llama.cpp's spinning thread barriers
      // on a busy two-core machine turned milliseconds into seconds per answer.
      threads: 1,
      ...extra,
    }),
  };
}

/** A scorer on the embedded provider (by `auto`: no endpoint anywhere), short answers. */
export function embeddedConfig(
  embedded: Record<string, unknown>,
  scorer: Record<string, unknown> = {},
): LlmConfig {
  return llmConfigSchema.parse({
    scorer: { embedded, sampling: { temperature: 0, max_tokens: 12 }, ...scorer },
  });
}

/** A service whose embedded roles fetch from the hub with no retries (the test hub is local). */
export function embeddedService(
  config: LlmConfig,
  dataDir: string,
  options: TestServiceOptions = {},
): LlmService {
  return testService(config, dataDir, {
    hub: hubConfigSchema.parse({ retries: 0, retry_backoff_s: 0 }),
    ...options,
  });
}

/** Requests for the GGUF file's bytes (not the listing or the one-byte probe) the hub has answered. */
export function fileTransfers(hub: TestHub): number {
  return hub.requests.filter(
    (r) =>
      r.method === "GET" && r.url.includes(`/resolve/`) && r.url.includes(FILE) && r.range !== "bytes=0-0",
  ).length;
}
