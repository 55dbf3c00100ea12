// What export wrote: its summary, kept in its manifest, where `push` finds the files to upload and
// the report the counts; read back only through `exportSummarySchema`.
import { z } from "zod";
import { dialogueTallySchema, paperShapeSchema, signedPercent } from "../../pipeline/dialogue.js";
import { languageShareSchema } from "./languages.js";
import { reviewSummarySchema } from "./review.js";

const countsSchema = z.record(z.string(), z.number());

const sourceUseSchema = z.object({
  /** the download source's name, which the ids of its records start with (magicoder, taco, ...) */
  name: z.string(),
  repo: z.string(),
  /** the revision the config asked for ("main", a tag), and the commits it resolved to */
  revision: z.string(),
  commits: z.array(z.string()),
  /** rows of the filtered set that came from it */
  rows: z.number(),
  /** released dialogues built (in part) from it */
  dialogues: z.number(),
  /** a local source: its `path` as configured and the fingerprint of its files (it has no repo or commit) */
  path: z.string().optional(),
  fingerprint: z.string().optional(),
  /** the adapter of a source the paper does not have (columns, chat, dialogues) */
  adapter: z.string().optional(),
});
export type SourceUse = z.infer<typeof sourceUseSchema>;

/** An audited dataset's verdict (stages/export/audits.ts). */
export const auditVerdictSchema = z.object({
  /** the method, named after its source */
  method: z.string(),
  /** the source's path or hub repo */
  where: z.string(),
  /** rows read: released + dropped */
  read: z.number(),
  released: z.number(),
  /** the released by their final code's outcome (`passed`, `no-code`, `not-runnable`) */
  released_by: countsSchema,
  dropped: z.number(),
  /** released / read, 0 when none was read */
  pass_rate: z.number(),
  /** dropped dialogues by reason */
  dropped_by: countsSchema,
  /** language -> released and dropped (`unknown` for rows that were no dialogue) */
  by_lang: z.record(z.string(), z.object({ released: z.number(), dropped: z.number() })),
});
export type AuditVerdict = z.infer<typeof auditVerdictSchema>;

/** Export's summary, as its manifest keeps it. */
export const exportSummarySchema = z.object({
  /** absolute path of the export directory */
  dir: z.string(),
  files: z.array(z.object({ name: z.string(), rows: z.number(), bytes: z.number(), sha256: z.string() })),
  code_feedback: z.object({
    dialogues: z.number(),
    by_method: dialogueTallySchema,
    /** final-code validation outcome -> exported dialogues */
    validation: countsSchema,
    /** whether `messages` keep a leading system message */
    keep_system: z.boolean(),
  }),
  /** every method's turns per dialogue beside the paper's, and whether the run has the paper's shape */
  shape: paperShapeSchema,
  /** each dialogue stage: `ran`, or `not run (disabled)` */
  dialogue_stages: z.record(z.string(), z.string()),
  filtered_instruction: z.object({
    rows: z.number(),
    by_lang: countsSchema,
    by_source: countsSchema,
    /** the language mix beside the paper's, deviations over 20% marked */
    languages: z.array(languageShareSchema),
  }),
  /** every source a released row came from */
  sources: z.array(sourceUseSchema),
  /** LLM role (and purpose) -> model; `embeddings` for the packing embedder */
  models: z.record(z.string(), z.string()),
  /** each audited dataset's verdict (stages/export/audits.ts), when the run audits any */
  audits: z.array(auditVerdictSchema).optional(),
  /** people's verdicts on the run (pipeline/review/), when anyone gave one */
  review: reviewSummarySchema.optional(),
});
export type ExportSummary = z.infer<typeof exportSummarySchema>;

/**
 * Whether every dialogue method that ran audits a dataset (`pnpm pipeline audit`): such a run makes no
 * dialogue, so the paper's per-method shape and its switched-off methods are nothing to report.
 */
export function auditsOnly(stats: Pick<ExportSummary, "shape" | "audits">): boolean {
  const audited = new Set((stats.audits ?? []).map((a) => a.method));
  return (
    audited.size > 0 && stats.shape.methods.every((m) => m.state === "disabled" || audited.has(m.method))
  );
}

/** The summary's lines: the shape verdict, then each figure over 20% off the paper's. */
export function describeShape(
  stats: Pick<ExportSummary, "shape" | "filtered_instruction" | "audits">,
): string[] {
  const audit = auditsOnly(stats);
  const lines = audit ? [] : [`this run ${stats.shape.verdict}`];
  for (const m of stats.shape.methods) {
    if (m.state === "disabled") {
      if (!audit) lines.push(`${m.method}: not run (disabled)`);
    } else if (m.state === "ran")
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
