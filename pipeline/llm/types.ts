// What stages see of the LLM layer: one client per role (scorer, weak, strong), each backed by the
// official `openai` SDK, the persistent response cache, retries and usage accounting.

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

export interface ChatOptions {
  /** overrides of the role's sampling parameters for this call (part of the cache key) */
  temperature?: number;
  top_p?: number;
  max_tokens?: number;
  seed?: number;
  /** skip the cache lookup (the answer is still stored) */
  noCache?: boolean;
  /**
   * Stops waiting (for a slot, a budget, a backoff) when aborted; a request already sent is left to
   * finish so its answer is not paid for twice. An aborted call rejects with LlmAbortedError. A call
   * that joined an identical request in flight gives up alone: the others keep waiting for it.
   */
  signal?: AbortSignal;
  /** for `estimate` only: the expected answer length in tokens (default: max_tokens) */
  expectedCompletionTokens?: number;
  /**
   * The answer must be a JSON value of this schema. OpenAI-compatible servers are sent it as
   * `response_format`; the embedded provider enforces it while sampling, so the answer always parses
   * (unless cut by `max_tokens`: keep structured answers short, or check `finishReason`).
   * Part of the cache key.
   */
  json_schema?: JsonSchemaFormat;
  /**
   * A GBNF grammar the answer must match (llama.cpp's grammar language). The embedded provider
   * enforces it; OpenAI-compatible servers have no standard field for it, so there it is not sent
   * and not part of the cache key: parse the answer as leniently as without it.
   */
  grammar?: string;
}

export interface JsonSchemaFormat {
  /** a name for the schema (OpenAI requires one: letters, digits, `_` and `-`) */
  name: string;
  schema: Record<string, unknown>;
  /** OpenAI's strict mode (every property required, no additional ones); unset: the server's default */
  strict?: boolean;
}

/** What one request would cost, for `run --dry-run`. */
export interface RequestEstimate {
  /** already answered: nothing would be sent */
  cached: boolean;
  promptTokens: number;
  completionTokens: number;
  costUsd: number;
}

export interface ChatResult {
  content: string;
  /** true when answered from the persistent cache (nothing sent, nothing paid) */
  cached: boolean;
  model: string;
  finishReason: string | null;
  usage: { promptTokens: number; completionTokens: number };
}

export interface LlmClient {
  readonly role: string;
  readonly model: string;
  chat(messages: ChatMessage[], options?: ChatOptions): Promise<ChatResult>;
}

/** For `run --dry-run`: needs the config and the response cache, never an endpoint. */
export interface LlmEstimator {
  readonly role: string;
  readonly model: string;
  /** false when `llm.prices` has no price for the model: its estimates cost 0, which means unknown */
  readonly priced?: boolean;
  /** the role's batch price as a share of the online one (`llm.<role>.batch.discount`), when it says */
  readonly batchDiscount?: number | undefined;
  /** What `chat` with the same arguments would send and cost; nothing is sent. */
  estimate(messages: readonly ChatMessage[], options?: ChatOptions): RequestEstimate;
  /** The cached answer `chat` would give, if there is one; nothing is sent or counted. */
  peek(messages: readonly ChatMessage[], options?: ChatOptions): ChatResult | undefined;
}
