// An OpenAI-compatible `/v1/embeddings` endpoint (OpenAI, TEI, vLLM, Infinity) through the official
// `openai` SDK, for runs too large for one CPU. The SDK retries 429, 5xx and dropped connections
// with backoff; a batch the server refuses as a whole (HTTP 400, usually one input too long for the
// model) is retried text by text so only the offending text is refused and the rest go through.
import OpenAI from "openai";
import { sleep } from "../abort.js";
import { NotConfiguredError, OperationalError, UserError, unreached } from "../errors.js";
import { innermost, silentFor } from "../liveness.js";
import type { OpenAIEmbedderConfig } from "./config.js";
import type { Embedder, RawEmbedding } from "./types.js";

export type Env = Record<string, string | undefined>;

const PROBE_EVERY_MS = 1000;

export class OpenAIEmbedder implements Embedder {
  readonly model: string;
  readonly batchSize: number;
  readonly concurrency: number;
  readonly dimension: number | undefined;
  readonly baseUrl: string;
  private client: OpenAI | undefined;
  /** the server answered in this run, if only with an error: not reaching it then is an outage */
  private heard = false;
  /** when a request first found nobody, while none was ever answered */
  private silentSince: number | undefined;
  /** rejects when nothing at the server's address answers HTTP within probe_s, while it never answered */
  private silence: Promise<never> | undefined;

  constructor(
    private readonly config: OpenAIEmbedderConfig,
    private readonly env: Env = process.env,
  ) {
    this.batchSize = config.batch_size;
    this.concurrency = config.concurrency;
    this.dimension = config.dimensions;
    this.baseUrl = (config.base_url ?? env[config.base_url_env] ?? "").trim().replace(/\/+$/, "");
    // The server is not part of the identity: the same model gives the same vectors wherever served.
    this.model = `openai:${config.model}${config.dimensions ? `:d${config.dimensions}` : ""}`;
  }

  /** Built on first use, so a run whose vectors are all cached needs no endpoint at all. */
  private connect(): OpenAI {
    if (this.client) return this.client;
    if (!this.baseUrl) {
      throw new NotConfiguredError(
        `no endpoint for the embedding model ${this.config.model}: set embedder.base_url in the stage's ` +
          `config (e.g. http://127.0.0.1:8080/v1 for TEI or vLLM) or export ${this.config.base_url_env}; ` +
          `the key, if the server needs one, goes in $${this.config.api_key_env}`,
      );
    }
    this.client = new OpenAI({
      baseURL: this.baseUrl,
      // Local servers usually need none, but the SDK insists on a string.
      apiKey: this.env[this.config.api_key_env]?.trim() || "no-key",
      maxRetries: this.config.retries,
      timeout: this.config.timeout_s * 1000,
    });
    return this.client;
  }

  async embed(
    texts: readonly string[],
    signal?: AbortSignal,
  ): Promise<(RawEmbedding | { refused: string })[]> {
    // Until the server first answers, one attempt a round: the SDK's retries would each wait out timeout_s.
    const probing = !this.heard;
    try {
      const vectors = await this.request(texts, signal, probing);
      this.heard = true;
      return vectors;
    } catch (error) {
      if (error instanceof OpenAI.APIError && error.status !== undefined) {
        this.heard = true;
        // the first answer is a 429 or 5xx: now with the SDK's retries
        if (probing && (error.status === 429 || error.status >= 500)) return this.embed(texts, signal);
      }
      // A server still loading gets probe_s to come up; its batches spend no retries meanwhile.
      if (!this.heard && (unreached(error) || error instanceof OpenAI.APIConnectionTimeoutError)) {
        this.silentSince ??= Date.now();
        const left = this.silentSince + this.config.probe_s * 1000 - Date.now();
        if (left > 0) {
          await sleep(Math.min(left, PROBE_EVERY_MS), signal);
          return this.embed(texts, signal);
        }
      }
      if (!(error instanceof OpenAI.BadRequestError)) throw this.advice(error);
      if (texts.length === 1) return [{ refused: `HTTP 400: ${error.message.slice(0, 300)}` }];
      const out: (RawEmbedding | { refused: string })[] = [];
      for (const text of texts) out.push(...(await this.embed([text], signal)));
      return out;
    }
  }

  private async request(
    texts: readonly string[],
    signal: AbortSignal | undefined,
    probing: boolean,
  ): Promise<RawEmbedding[]> {
    const asked = this.connect().embeddings.create(
      {
        model: this.config.model,
        input: [...texts],
        encoding_format: "float",
        ...(this.config.dimensions ? { dimensions: this.config.dimensions } : {}),
      },
      { ...(signal ? { signal } : {}), ...(probing ? { maxRetries: 0 } : {}) },
    );
    const response = probing ? await Promise.race([asked, this.unlessSilent()]) : await asked;
    const byIndex = new Map(response.data.map((d) => [d.index, d.embedding]));
    return texts.map((_, i) => {
      const embedding = byIndex.get(i);
      if (!Array.isArray(embedding)) {
        throw new Error(
          `the embeddings server at ${this.baseUrl} answered ${response.data.length} vectors for ${texts.length} inputs (none for input ${i})`,
        );
      }
      return { vector: Float32Array.from(embedding), truncated: false };
    });
  }

  /**
   * Rejects once nothing answers HTTP at the server's address within probe_s while it never
   * answered: a server that accepts and never answers would else hold each batch for timeout_s.
   */
  private unlessSilent(): Promise<never> {
    this.silence ??= silentFor([`${this.baseUrl}/models`], this.config.probe_s * 1000, () => this.heard).then(
      (silence) => {
        if (!silence || this.heard) return new Promise<never>(() => {});
        throw this.advice(
          new OpenAI.APIConnectionError({ message: "no answer", cause: new Error(silence.reason) }),
        );
      },
    );
    return this.silence;
  }

  /** The SDK's own messages ("Connection error.", "401 invalid api key") name neither server nor setting. */
  private advice(error: unknown): unknown {
    const at = `the embeddings server at ${this.baseUrl}`;
    const cached = "the vectors computed so far are cached; rerun to continue";
    if (error instanceof OpenAI.AuthenticationError || error instanceof OpenAI.PermissionDeniedError) {
      return new UserError(
        `${at} ${error.status === 401 ? "rejected the API key" : "refused access (403)"}: ${error.message}. ` +
          `Put the right key in $${this.config.api_key_env} (or set embedder.api_key_env to the variable ` +
          `that holds it); ${cached}`,
        { cause: error, exitCode: 3 },
      );
    }
    if (error instanceof OpenAI.NotFoundError) {
      return new UserError(
        `${at} answered 404 for model ${this.config.model}: ${error.message}. Check embedder.model (a ` +
          "model the server serves) and embedder.base_url (OpenAI-compatible servers usually want it " +
          `to end in /v1); ${cached}`,
        { cause: error, exitCode: 3 },
      );
    }
    if (error instanceof OpenAI.APIConnectionError && !(error instanceof OpenAI.APIUserAbortError)) {
      const inner = innermost(error);
      const cause = inner !== error.message ? ` (${inner})` : "";
      const tried = this.heard ? `after ${this.config.retries} retries` : `in ${this.config.probe_s} s`;
      const message =
        `cannot reach ${at}${cause} ${tried}: start it, or fix ` +
        `embedder.base_url or $${this.config.base_url_env} (OpenAI-compatible servers usually want it to ` +
        `end in /v1); ${cached}`;
      // never answered: a wrong address or a server not up (3); answered before: an outage (4)
      return this.heard
        ? new OperationalError(message, { cause: error })
        : new UserError(message, { cause: error, exitCode: 3 });
    }
    return error;
  }

  async close(): Promise<void> {}
}
