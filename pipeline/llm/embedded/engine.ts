// One role's generator on the embedded model: a llama.cpp context with `sequences` parallel
// sequences (llama.cpp evaluates them together, one batch per step), one chat per sequence so a
// follow-up turn reuses the evaluated prefix of its conversation, and grammars built once per text.
// `generate` turns messages into the model's chat format, counts the prompt's tokens exactly, refuses
// a prompt that does not fit, constrains the answer when asked, and reports what came out.
import type {
  ChatHistoryItem,
  ChatWrapper,
  LlamaChat,
  LlamaContext,
  LlamaGrammar,
  LlamaModel,
} from "node-llama-cpp";
import type { CachedAnswer } from "../cache.js";
import type { Sampling } from "../config.js";
import { LlmAbortedError, LlmAttemptError } from "../errors.js";
import type { ChatMessage, JsonSchemaFormat } from "../types.js";
import type { EmbeddedModelConfig } from "./config.js";
import type { LoadedModel } from "./runtime.js";

export interface Constraint {
  jsonSchema?: JsonSchemaFormat | undefined;
  grammar?: string | undefined;
}

export class EmbeddedEngine {
  readonly contextSize: number;
  readonly sequences: number;
  readonly device: string;
  private readonly grammars = new Map<string, Promise<LlamaGrammar>>();

  private constructor(
    readonly role: string,
    readonly modelName: string,
    private readonly loaded: LoadedModel,
    private readonly context: LlamaContext,
    private readonly wrapper: ChatWrapper,
    /** chats on sequences nobody is generating on; the caller's limit keeps it from running dry */
    private readonly idle: LlamaChat[],
  ) {
    this.contextSize = context.contextSize;
    this.sequences = idle.length;
    this.device = loaded.device;
  }

  static async create(
    role: string,
    modelName: string,
    loaded: LoadedModel,
    config: EmbeddedModelConfig,
  ): Promise<EmbeddedEngine> {
    const { LlamaChat, resolveChatWrapper } = await import("node-llama-cpp");
    const model: LlamaModel = loaded.model;
    const context = await model.createContext({
      sequences: config.sequences,
      contextSize: Math.min(config.context_size, model.trainContextSize),
      ...(config.batch_size === undefined ? {} : { batchSize: config.batch_size }),
      ...(config.threads === undefined ? {} : { threads: config.threads }),
    });
    // The model's own template (its GGUF metadata) decides the chat format, as any llama.cpp server does.
    const wrapper = resolveChatWrapper(model) ?? resolveChatWrapper({ type: "general" });
    const chats: LlamaChat[] = [];
    for (let i = 0; i < config.sequences; i++) {
      chats.push(new LlamaChat({ contextSequence: context.getSequence(), chatWrapper: wrapper }));
    }
    return new EmbeddedEngine(role, modelName, loaded, context, wrapper, chats);
  }

  async generate(
    messages: readonly ChatMessage[],
    sampling: Sampling,
    constraint: Constraint,
    signal: AbortSignal | undefined,
  ): Promise<CachedAnswer> {
    const grammar = await this.grammarOf(constraint);
    const history = toHistory(messages);
    const promptTokens = this.wrapper
      .generateContextState({ chatHistory: history })
      .contextText.tokenize(this.loaded.model.tokenizer).length;
    // One token of room at least; a prompt that leaves none would be cut by a context shift, which
    // silently changes the question: refuse instead (the filter rejects such a query as too long).
    const room = this.contextSize - promptTokens - 1;
    if (room < 1) {
      throw new LlmAttemptError(
        "bad-request",
        `the prompt is ${promptTokens} tokens and the model's context holds ${this.contextSize} per ` +
          `sequence (too long; llm.${this.role}.embedded.context_size sets it)`,
      );
    }
    const chat = this.idle.pop();
    if (!chat)
      throw new Error(`embedded role '${this.role}': no free sequence (a bug: the limit is the pool size)`);
    let completionTokens = 0;
    try {
      const response = await chat.generateResponse(history, {
        maxTokens: Math.min(sampling.max_tokens ?? room, room),
        ...(sampling.temperature === undefined ? {} : { temperature: sampling.temperature }),
        ...(sampling.top_p === undefined ? {} : { topP: sampling.top_p }),
        ...(sampling.seed === undefined ? {} : { seed: sampling.seed }),
        ...(sampling.stop ? { customStopTriggers: sampling.stop } : {}),
        ...(grammar ? { grammar } : {}),
        ...(signal ? { signal } : {}),
        onToken: (tokens) => {
          completionTokens += tokens.length;
        },
      });
      const stop = response.metadata.stopReason;
      if (stop === "abort") throw new LlmAbortedError(this.role);
      return {
        content: response.response,
        model: this.modelName,
        finishReason: stop === "maxTokens" ? "length" : "stop",
        promptTokens,
        completionTokens,
      };
    } catch (error) {
      if (signal?.aborted || error instanceof LlmAbortedError) throw new LlmAbortedError(this.role);
      if (error instanceof LlmAttemptError) throw error;
      throw new LlmAttemptError(
        "server-error",
        `llama.cpp failed: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    } finally {
      this.idle.push(chat);
    }
  }

  private grammarOf(constraint: Constraint): Promise<LlamaGrammar | undefined> {
    const { jsonSchema, grammar } = constraint;
    if (jsonSchema && grammar !== undefined) {
      throw new LlmAttemptError("bad-request", "ask for a json_schema or a grammar, not both");
    }
    if (!jsonSchema && grammar === undefined) return Promise.resolve(undefined);
    const key = jsonSchema ? `json:${JSON.stringify(jsonSchema.schema)}` : `gbnf:${grammar}`;
    let made = this.grammars.get(key);
    if (!made) {
      const llama = this.loaded.llama;
      made = (
        jsonSchema
          ? // the schema's shape is checked by llama.cpp's converter, not by the type system
            llama.createGrammarForJsonSchema(jsonSchema.schema as never)
          : llama.createGrammar({ grammar: grammar! })
      ).catch((error: unknown) => {
        this.grammars.delete(key);
        throw new LlmAttemptError(
          "bad-request",
          `the ${jsonSchema ? "JSON schema" : "grammar"} is not usable: ${error instanceof Error ? error.message : String(error)}`,
        );
      }) as Promise<LlamaGrammar>;
      this.grammars.set(key, made);
    }
    return made;
  }

  async close(): Promise<void> {
    await this.context.dispose();
  }
}

/** OpenAI-style messages as the chat history node-llama-cpp formats, ending with the answer to write. */
function toHistory(messages: readonly ChatMessage[]): ChatHistoryItem[] {
  const history: ChatHistoryItem[] = messages.map((m) =>
    m.role === "assistant"
      ? { type: "model", response: [m.content] }
      : m.role === "system"
        ? { type: "system", text: m.content }
        : { type: "user", text: m.content },
  );
  history.push({ type: "model", response: [] });
  return history;
}
