// The llama.cpp runtime, loaded once per process and only when a role resolves to the embedded
// provider (the native bindings are not small). Prebuilt binaries only (`build: "never"`): the
// package ships them for CPU, CUDA, Vulkan and Metal, and `gpu: "auto"` takes a usable GPU where one
// is found and the CPU otherwise. Roles that name the same GGUF file share its weights in memory;
// each role has its own context (its own sequences).
import type { Llama, LlamaModel } from "node-llama-cpp";
import { UserError } from "../../errors.js";
import type { Logger } from "../../log.js";
import type { EmbeddedModelConfig } from "./config.js";

export interface LoadedModel {
  llama: Llama;
  model: LlamaModel;
  /** e.g. `cuda`, or `cpu` */
  device: string;
}

export class EmbeddedModels {
  private readonly llamas = new Map<string, Promise<Llama>>();
  private readonly models = new Map<string, Promise<LoadedModel>>();
  private readonly log: Logger;

  constructor(log: Logger) {
    this.log = log;
  }

  /** The model in `file`, loaded on first use; concurrent callers share one load. */
  load(file: string, config: EmbeddedModelConfig): Promise<LoadedModel> {
    const key = `${String(config.gpu)}|${file}`;
    let loaded = this.models.get(key);
    if (!loaded) {
      loaded = this.open(file, config);
      this.models.set(key, loaded);
      // A failed load is not kept: the next run (or a fixed file) tries again.
      loaded.catch(() => this.models.delete(key));
    }
    return loaded;
  }

  private async open(file: string, config: EmbeddedModelConfig): Promise<LoadedModel> {
    const llama = await this.llama(config.gpu);
    try {
      const model = await llama.loadModel({ modelPath: file });
      return { llama, model, device: llama.gpu === false ? "cpu" : llama.gpu };
    } catch (error) {
      throw new UserError(
        `could not load the GGUF model ${file}: ${error instanceof Error ? error.message : String(error)}. ` +
          "The file may be damaged or not a model llama.cpp knows: delete it (and its .verified note) to " +
          "fetch it again, or point llm.<role>.embedded at another GGUF file.",
        { cause: error },
      );
    }
  }

  private llama(gpu: EmbeddedModelConfig["gpu"]): Promise<Llama> {
    const key = String(gpu);
    let llama = this.llamas.get(key);
    if (!llama) {
      llama = (async () => {
        const { getLlama, LlamaLogLevel } = await import("node-llama-cpp");
        try {
          return await getLlama({
            build: "never",
            gpu,
            // llama.cpp's own chatter goes to the debug log; its errors are surfaced as ours
            logLevel: LlamaLogLevel.warn,
            logger: (level, message) => {
              const line = message.trim();
              if (line) this.log.debug(`llama.cpp ${level}: ${line}`);
            },
          });
        } catch (error) {
          throw new UserError(
            `could not start llama.cpp (node-llama-cpp) with gpu: ${key}: ` +
              `${error instanceof Error ? error.message : String(error)}. Only prebuilt binaries are used; ` +
              "set llm.<role>.embedded.gpu: false to run on the CPU, or point the role at an " +
              "OpenAI-compatible server (OPENAI_BASE_URL).",
            { cause: error },
          );
        }
      })();
      this.llamas.set(key, llama);
    }
    return llama;
  }

  async close(): Promise<void> {
    const models = [...this.models.values()];
    this.models.clear();
    for (const loaded of await Promise.allSettled(models)) {
      if (loaded.status === "fulfilled") await loaded.value.model.dispose();
    }
    const llamas = [...this.llamas.values()];
    this.llamas.clear();
    for (const llama of await Promise.allSettled(llamas)) {
      if (llama.status === "fulfilled") await llama.value.dispose();
    }
  }
}
