// `stages.export`: what the dataset card says and how the Parquet files are cut. Every key has a default.
import { z } from "zod";

/** Licences of the paper's sources where their cards state one; others are left for the user to fill in. */
export const KNOWN_SOURCE_LICENSES: Record<string, string> = {
  "ise-uiuc/Magicoder-OSS-Instruct-75K": "mit",
  "ise-uiuc/Magicoder-Evol-Instruct-110K": "apache-2.0",
  "BAAI/TACO": "apache-2.0",
};

export const exportConfigSchema = z
  .object({
    /**
     * keep a dialogue's leading system message (simulate's and correct's code-interpreter prompt) in
     * `messages`; m-a-p/Code-Feedback has none, so by default it is left out (the full config keeps it
     * in its `system` column either way)
     */
    keep_system: z.boolean().default(false),
    /** also write the `code-feedback-full` config: string id, method, sources, language, validation */
    full: z.boolean().default(true),
    /** also write each file as Parquet (what the hub's viewer and `datasets` read fastest) */
    parquet: z.boolean().default(true),
    /** rows per Parquet row group */
    row_group_size: z.number().int().positive().default(10_000),
    card: z
      .object({
        /** the card's title */
        pretty_name: z.string().min(1).default("Code-Feedback (reproduced with codefeedback)"),
        /** the dataset's licence, as a hub licence id (m-a-p/Code-Feedback: apache-2.0) */
        license: z.string().min(1).default("apache-2.0"),
        task_categories: z.array(z.string().min(1)).default(["question-answering", "text-generation"]),
        language: z.array(z.string().min(1)).default(["en"]),
        tags: z.array(z.string().min(1)).default(["code"]),
        /** source dataset repo -> licence id, over the built-in ones; a source with none says "not stated" */
        source_licenses: z.record(z.string(), z.string().min(1)).default({}),
      })
      .strict()
      .prefault({}),
  })
  .strict();
export type ExportConfig = z.infer<typeof exportConfigSchema>;
