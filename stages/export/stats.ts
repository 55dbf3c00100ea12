// What export wrote, kept in its work dir for the summary (and so in its manifest, where `push` finds
// the files to upload and the report the counts).
import { readFile } from "node:fs/promises";
import path from "node:path";
import type { DialogueTally } from "../../pipeline/dialogue.js";

/** The files under `<data_dir>/export/`; nothing else there is part of the release. */
export const EXPORT_FILES = {
  codeFeedback: "code-feedback.jsonl",
  codeFeedbackParquet: "code-feedback.parquet",
  filteredInstruction: "filtered-instruction.jsonl",
  filteredInstructionParquet: "filtered-instruction.parquet",
  card: "README.md",
} as const;

export const EXPORT_STATS_FILE = "export-stats.json";

export interface ExportStats {
  /** absolute path of the export directory */
  dir: string;
  files: { name: string; rows: number; bytes: number; sha256: string }[];
  code_feedback: {
    dialogues: number;
    by_method: ReturnType<DialogueTally["result"]>;
    /** final-code validation outcome -> exported dialogues */
    validation: Record<string, number>;
  };
  filtered_instruction: { rows: number; by_lang: Record<string, number>; by_source: Record<string, number> };
  /** LLM role (and purpose) -> model; `embeddings` for the packing embedder */
  models: Record<string, string>;
}

export async function readExportStats(workDir: string): Promise<ExportStats | undefined> {
  try {
    return JSON.parse(await readFile(path.join(workDir, EXPORT_STATS_FILE), "utf8")) as ExportStats;
  } catch {
    return undefined;
  }
}
