// `llm.<role>.embedded`: the GGUF model a role runs in-process (node-llama-cpp) when its provider
// resolves to `embedded`. The model is a local file (`path`) or a file of a hub repository pinned by
// `repo`, `revision` and `file`, fetched once through the project's hub client. Why this default
// model: docs/llm.md, "The embedded provider".
import { z } from "zod";

export const DEFAULT_EMBEDDED_MODEL = {
  repo: "Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF",
  // A branch until someone with hub access pins the commit it resolves to (docs/llm.md says why).
  revision: "main",
  file: "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
} as const;

export const embeddedModelSchema = z
  .object({
    /** hub model repository holding the GGUF file */
    repo: z.string().min(1).default(DEFAULT_EMBEDDED_MODEL.repo),
    /** branch, tag or commit; pin a commit for reproducible answers (it is part of the cache key) */
    revision: z.string().min(1).default(DEFAULT_EMBEDDED_MODEL.revision),
    /** the GGUF file's path inside the repository */
    file: z.string().min(1).default(DEFAULT_EMBEDDED_MODEL.file),
    /** a GGUF file on this machine, used instead of repo/revision/file (relative: to the current directory) */
    path: z.string().min(1).optional(),
    /** the model's name in the cache key and the answers; default: see `embeddedModelName` */
    name: z.string().min(1).optional(),
    /**
     * Where the GGUF is fetched from: a hub URL or `file:DIR`. Unset: `hub.endpoint`, else
     * `$HF_ENDPOINT`, else the public hub. `default` skips `hub.endpoint` (for configs whose hub
     * serves only datasets, like configs/sample.yaml): `$HF_ENDPOINT`, else the public hub.
     */
    hub_endpoint: z.string().min(1).optional(),
    /** tokens per sequence: prompt and answer together; a prompt that does not fit is refused */
    context_size: z.number().int().min(64).max(1_048_576).default(4096),
    /** sequences generated in parallel in one context (one batch); memory grows with each */
    sequences: z.number().int().positive().max(256).default(4),
    /** tokens evaluated per batch, all sequences together; default: llama.cpp's (512) */
    batch_size: z.number().int().positive().max(65_536).optional(),
    /** `auto`: CUDA, Vulkan or Metal where a usable one is found, the CPU otherwise; `false`: CPU only */
    gpu: z.union([z.literal("auto"), z.literal(false), z.enum(["cuda", "vulkan", "metal"])]).default("auto"),
    /** CPU threads; default: every core */
    threads: z.number().int().positive().max(1024).optional(),
  })
  .strict();

export type EmbeddedModelConfig = z.infer<typeof embeddedModelSchema>;

/**
 * The model's name in the cache key, answers and manifests: what identifies its weights without
 * opening it, so a dry-run knows it offline. A local file is named by its file name (set `name` when
 * two files share one).
 */
export function embeddedModelName(config: EmbeddedModelConfig): string {
  if (config.name) return config.name;
  if (config.path) return `gguf:${config.path.split(/[\\/]/).pop()}`;
  return `${config.repo}/${config.file}@${config.revision}`;
}
