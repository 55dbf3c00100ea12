// What export wrote: its summary, kept in its manifest, where `push` finds the files to upload and
// the report the counts; read back only through `exportSummarySchema`.
import { z } from "zod";
import {
  type DialogueTally,
  dialogueTallySchema,
  type paperShape,
  paperShapeSchema,
  signedPercent,
} from "../../pipeline/dialogue.js";
import type { LanguageShare } from "../filter/languages.js";
import type { SourceUse } from "./card.js";

/** The files under `<data_dir>/export/`; nothing else there is part of the release. */
export const EXPORT_FILES = {
  codeFeedback: "code-feedback.jsonl",
  codeFeedbackParquet: "code-feedback.parquet",
  codeFeedbackFull: "code-feedback-full.jsonl",
  codeFeedbackFullParquet: "code-feedback-full.parquet",
  filteredInstruction: "filtered-instruction.jsonl",
  filteredInstructionParquet: "filtered-instruction.parquet",
  card: "README.md",
} as const;

export type ExportStats = {
  /** absolute path of the export directory */
  dir: string;
  files: { name: string; rows: number; bytes: number; sha256: string }[];
  code_feedback: {
    dialogues: number;
    by_method: ReturnType<DialogueTally["result"]>;
    /** final-code validation outcome -> exported dialogues */
    validation: Record<string, number>;
    /** whether `messages` keep a leading system message */
    keep_system: boolean;
  };
  /** every method's turns per dialogue beside the paper's, and whether the run has the paper's shape */
  shape: ReturnType<typeof paperShape>;
  /** each dialogue stage: `ran`, or `not run (disabled)` */
  dialogue_stages: Record<string, string>;
  filtered_instruction: {
    rows: number;
    by_lang: Record<string, number>;
    by_source: Record<string, number>;
    /** the language mix beside the paper's, deviations over 20% marked */
    languages: LanguageShare[];
  };
  /** every source a released row came from */
  sources: SourceUse[];
  /** LLM role (and purpose) -> model; `embeddings` for the packing embedder */
  models: Record<string, string>;
};

/** Export's summary, as its manifest keeps it. */
export type ExportSummary = ExportStats;

const countsSchema = z.record(z.string(), z.number());

export const exportSummarySchema: z.ZodType<ExportSummary> = z.object({
  dir: z.string(),
  files: z.array(z.object({ name: z.string(), rows: z.number(), bytes: z.number(), sha256: z.string() })),
  code_feedback: z.object({
    dialogues: z.number(),
    by_method: dialogueTallySchema,
    validation: countsSchema,
    keep_system: z.boolean(),
  }),
  shape: paperShapeSchema,
  dialogue_stages: z.record(z.string(), z.string()),
  filtered_instruction: z.object({
    rows: z.number(),
    by_lang: countsSchema,
    by_source: countsSchema,
    languages: z.array(
      z.object({
        lang: z.string(),
        count: z.number(),
        percent: z.number(),
        paper: z.number(),
        deviation: z.number(),
        deviates: z.boolean(),
      }),
    ),
  }),
  sources: z.array(
    z.object({
      name: z.string(),
      repo: z.string(),
      revision: z.string(),
      commits: z.array(z.string()),
      rows: z.number(),
      dialogues: z.number(),
    }),
  ),
  models: z.record(z.string(), z.string()),
});

/** The summary's lines: the shape verdict, then each figure over 20% off the paper's. */
export function describeShape(stats: Pick<ExportStats, "shape" | "filtered_instruction">): string[] {
  const lines = [`this run ${stats.shape.verdict}`];
  for (const m of stats.shape.methods) {
    if (m.state === "disabled") lines.push(`${m.method}: not run (disabled)`);
    else if (m.state === "ran")
      lines.push(
        `${m.method}: ${m.turns_per_dialogue} turns per dialogue${m.paper_turns_per_dialogue === undefined ? "" : ` (paper: ${m.paper_turns_per_dialogue}, ${signedPercent(m.deviation)}${m.deviates ? ", over 20%" : ""})`}`,
      );
  }
  const langs = stats.filtered_instruction.languages;
  if (langs.length)
    lines.push(
      `filtered languages (paper): ${langs
        .map(
          (l) =>
            `${l.lang} ${l.percent.toFixed(1)}% (${l.paper}%${l.deviates ? `, ${signedPercent(l.deviation)} over 20%` : ""})`,
        )
        .join(", ")}`,
    );
  return lines;
}
