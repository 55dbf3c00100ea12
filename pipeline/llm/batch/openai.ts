// The role's endpoint as a batch provider, through the `openai` SDK's Files and Batches APIs: upload
// an input file, create a batch tagged with the ledger entry's id, poll it, read its output and
// error files. Transient failures (5xx, 429, a dropped connection) are tried again with backoff;
// a server without the Batches API, or one that refuses the key, is a UserError (exit 2).
import OpenAI, { toFile } from "openai";
import { sleep } from "../../abort.js";
import { UserError } from "../../errors.js";
import type { Logger } from "../../log.js";
import { createSdkClient } from "../attempt.js";
import { backoffMs } from "../backoff.js";
import type { Endpoint } from "../endpoint.js";
import { redact } from "../errors.js";
import { CHAT_URL } from "./lines.js";

/** The metadata key a batch's ledger id goes under, to find the batch again after a crash. */
export const METADATA_KEY = "codefeedback_batch";

export type ProviderBatch = OpenAI.Batches.Batch;

export class OpenAiBatches {
  private readonly sdk: OpenAI;
  private readonly endpoint: Endpoint;
  private readonly log: Logger;
  private checked = false;

  constructor(endpoint: Endpoint, log: Logger) {
    this.endpoint = endpoint;
    this.log = log;
    this.sdk = createSdkClient(endpoint.baseUrl, endpoint.apiKey, fetch);
  }

  /**
   * Once, before anything is uploaded: the server has a Batches API and takes the key. A 404 is a
   * server without one (vLLM's and SGLang's OpenAI-compatible servers).
   */
  async check(): Promise<void> {
    if (this.checked) return;
    await this.call("list batches", () => this.sdk.batches.list({ limit: 1 }));
    this.checked = true;
  }

  /** The batch a crashed run created for ledger entry `id`, if there is one. */
  async findBatch(id: string): Promise<ProviderBatch | undefined> {
    return this.call("list batches", async () => {
      for await (const batch of this.sdk.batches.list({ limit: 100 })) {
        if (batch.metadata?.[METADATA_KEY] === id) return batch;
      }
      return undefined;
    });
  }

  /** The input file a crashed run uploaded under `name`, if there is one. */
  async findFile(name: string): Promise<string | undefined> {
    return this.call("list files", async () => {
      for await (const file of this.sdk.files.list({ purpose: "batch" })) {
        if (file.filename === name) return file.id;
      }
      return undefined;
    });
  }

  async upload(name: string, text: string): Promise<string> {
    const file = await this.call("upload", async () =>
      this.sdk.files.create({ file: await toFile(Buffer.from(text), name), purpose: "batch" }),
    );
    return file.id;
  }

  async create(fileId: string, id: string, completionWindow: string): Promise<ProviderBatch> {
    return this.call("create batch", () =>
      this.sdk.batches.create({
        input_file_id: fileId,
        endpoint: CHAT_URL,
        completion_window: completionWindow as "24h",
        metadata: { [METADATA_KEY]: id },
      }),
    );
  }

  retrieve(batchId: string): Promise<ProviderBatch> {
    return this.sdk.batches.retrieve(batchId, { maxRetries: 0 });
  }

  async content(fileId: string): Promise<string> {
    return this.call("download", async () => (await this.sdk.files.content(fileId)).text());
  }

  /** `what` with retries on transient failures; refusals become UserErrors with advice. */
  private async call<T>(what: string, run: () => Promise<T>): Promise<T> {
    const rc = this.endpoint.config;
    for (let attempt = 1; ; attempt++) {
      try {
        return await run();
      } catch (error) {
        const refusal = this.refusal(error, what);
        if (refusal) throw refusal;
        const status = error instanceof OpenAI.APIError ? error.status : undefined;
        const transient =
          error instanceof OpenAI.APIConnectionError ||
          status === undefined ||
          status === 429 ||
          status === 408 ||
          status >= 500;
        if (!transient || attempt > rc.retries) throw this.failure(error, what);
        const message = redact((error as Error).message, this.endpoint.apiKey);
        this.log.warn(`llm role '${this.endpoint.role}': batch ${what} failed (${message}); trying again`);
        await sleep(backoffMs(attempt, { baseMs: rc.backoff_s * 1000, maxMs: rc.max_backoff_s * 1000 }));
      }
    }
  }

  private refusal(error: unknown, what: string): UserError | undefined {
    if (!(error instanceof OpenAI.APIError)) return undefined;
    const role = this.endpoint.role;
    const message = redact(error.message, this.endpoint.apiKey);
    if (error.status === 401 || error.status === 403) {
      return new UserError(
        `llm role '${role}': the server at ${this.endpoint.shownUrl} refused the key for the Batches API (${what}): ${message}\n` +
          `Check the key in ${this.endpoint.apiKeySource}. Nothing was uploaded.`,
      );
    }
    if (error.status === 404 && !this.checked) {
      return new UserError(
        `llm role '${role}': the server at ${this.endpoint.shownUrl} has no Batches API (${what}: 404 ${message}). ` +
          `vLLM's and SGLang's servers have none: set llm.${role}.batch.provider: files (vllm run-batch) ` +
          `or remove llm.${role}.batch to run online.`,
      );
    }
    return undefined;
  }

  private failure(error: unknown, what: string): Error {
    const message = redact((error as Error)?.message ?? String(error), this.endpoint.apiKey);
    return new UserError(`llm role '${this.endpoint.role}': batch ${what} failed: ${message}`, {
      exitCode: 3,
    });
  }
}
