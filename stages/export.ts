// The release under `<data_dir>/export/`: the validated dialogues as m-a-p/Code-Feedback publishes them
// (`{id, messages}`) and with how each was made (`code-feedback-full`), the filtered pairs as
// m-a-p/CodeFeedback-Filtered-Instruction does (`{query, answer, resource, lang}`), each as JSONL and
// Parquet, and a dataset card. Rows are sorted by stable id, so a rerun writes the same bytes; every
// file is written whole or not at all. Its own outputs: one record per file (name, rows, bytes, hash).
import { rm } from "node:fs/promises";
import path from "node:path";
import type { SchemaElement } from "hyparquet";
import { paperShape } from "../pipeline/dialogue.js";
import { ROLE_NAMES } from "../pipeline/llm/config.js";
import type { Reject } from "../pipeline/record.js";
import { verdictsDigest } from "../pipeline/review/marks.js";
import { defineStage, type Emitter, type StageContext } from "../pipeline/stage.js";
import { removeLeftovers, type WrittenFile, writeAtomically } from "./export/atomic.js";
import { auditVerdicts, describeAudits } from "./export/audits.js";
import { datasetCard } from "./export/card.js";
import { type ExportConfig, exportConfigSchema } from "./export/config.js";
import { compareLanguages } from "./export/languages.js";
import {
  CODE_FEEDBACK_FULL_SCHEMA,
  CODE_FEEDBACK_SCHEMA,
  FILTERED_INSTRUCTION_SCHEMA,
  writeParquetAtomically,
} from "./export/parquet.js";
import { exportReport } from "./export/report.js";
import { ReleaseReview } from "./export/review.js";
import { dialogueRows, readDialogues, readInstructions, sourcesUsed } from "./export/rows.js";
import { auditsOnly, describeShape, type ExportSummary, exportSummarySchema } from "./export/stats.js";

type ExportContext = StageContext<ExportConfig>;

function* jsonLines(rows: readonly unknown[]): Generator<string> {
  for (const row of rows) yield `${JSON.stringify(row)}\n`;
}

async function exportDatasets(ctx: ExportContext, emit: Emitter): Promise<ExportSummary | undefined> {
  const { config } = ctx;
  const dir = path.join(ctx.dataDir, "export");
  await removeLeftovers(dir);
  const review = new ReleaseReview(ctx.dataDir);
  // what export refuses itself counts in an audited dataset's verdict
  const refused: Reject[] = [];
  const refuse = async (reject: Reject) => {
    refused.push(reject);
    await emit.reject(reject);
  };
  const read = await readDialogues(ctx, { ...emit, reject: refuse }, review);
  const rows = dialogueRows(read.dialogues, config.keep_system);
  const instructions = await readInstructions(ctx, emit);
  const sources = await sourcesUsed(ctx, instructions.rows, read.dialogues);
  const audits = await auditVerdicts(ctx, read.dialogues, refused);
  if (ctx.signal.aborted) return;
  const pairs = instructions.rows.map((r) => r.row);
  const written: (WrittenFile & { rows: number })[] = [];
  const at = (name: string) => path.join(dir, name);
  const methods = read.tally.result();
  const disabled = ctx.registry.disabledDialogueStages(ctx.root.stages);
  const shape = paperShape(methods, ctx.registry.methods, ctx.registry.methodsOfStages(disabled));
  // an audit that read no instruction pairs has no filtered set: no empty files of one in its release
  const filtered = pairs.length > 0 || !auditsOnly({ shape, audits });
  // the release's file sets: each as JSONL, then each as Parquet
  const sets: { stem: string; data: readonly object[]; schema: SchemaElement[] }[] = [
    { stem: "code-feedback", data: rows.public, schema: CODE_FEEDBACK_SCHEMA },
    ...(config.full
      ? [{ stem: "code-feedback-full", data: rows.full, schema: CODE_FEEDBACK_FULL_SCHEMA }]
      : []),
    ...(filtered ? [{ stem: "filtered-instruction", data: pairs, schema: FILTERED_INSTRUCTION_SCHEMA }] : []),
  ];
  for (const { stem, data } of sets) {
    written.push({ ...(await writeAtomically(at(`${stem}.jsonl`), jsonLines(data))), rows: data.length });
  }
  for (const { stem, data, schema } of config.parquet ? sets : []) {
    const rowsOf = data as readonly Record<string, unknown>[];
    const file = await writeParquetAtomically(at(`${stem}.parquet`), schema, rowsOf, config.row_group_size);
    written.push({ ...file, rows: data.length });
  }
  // files of an earlier release this one does not have are not left beside it
  if (!filtered)
    for (const name of ["filtered-instruction.jsonl", "filtered-instruction.parquet"])
      await rm(at(name), { force: true });
  const models: Record<string, string> = {};
  for (const role of ROLE_NAMES) models[`${role} (${ROLE_PURPOSE[role]})`] = ctx.root.llm[role].model;
  const bySource: Record<string, number> = {};
  for (const p of pairs) bySource[p.resource] = (bySource[p.resource] ?? 0) + 1;
  const stats: ExportSummary = {
    dir,
    files: [],
    code_feedback: {
      dialogues: rows.public.length,
      by_method: methods,
      validation: read.validation,
      keep_system: config.keep_system,
    },
    shape,
    dialogue_stages: Object.fromEntries(
      ctx.registry.dialogueStages.map((s) => [s, disabled.includes(s) ? "not run (disabled)" : "ran"]),
    ),
    filtered_instruction: {
      rows: pairs.length,
      by_lang: instructions.langs,
      by_source: bySource,
      languages: compareLanguages(instructions.langs)?.rows ?? [],
    },
    sources,
    models: { ...models, ...(read.embedders.length ? { embeddings: read.embedders.join(", ") } : {}) },
    ...(audits.length ? { audits } : {}),
    ...(review.active ? { review: await review.summary(ctx.read("validate", { rejects: true })) } : {}),
  };
  const card = datasetCard(config.card, stats, { declared: ctx.registry.methods, filtered, ...config });
  written.push({ ...(await writeAtomically(at("README.md"), [card])), rows: 0 });
  for (const file of written) {
    await emit.out({
      id: file.name,
      path: path.join("export", file.name),
      rows: file.rows,
      bytes: file.bytes,
      sha256: file.sha256,
    });
  }
  stats.files = written.map((f) => ({ name: f.name, rows: f.rows, bytes: f.bytes, sha256: f.sha256 }));
  ctx.log.info(
    `wrote ${rows.public.length} dialogues${filtered ? ` and ${pairs.length} filtered instructions` : ""} to ${dir}`,
  );
  for (const line of describeShape(stats)) ctx.log.info(line);
  for (const line of describeAudits(audits)) ctx.log.info(line);
  return stats;
}

const ROLE_PURPOSE: Record<(typeof ROLE_NAMES)[number], string> = {
  scorer: "complexity filtering",
  weak: "first answers in interaction simulation",
  strong: "feedback, fixes and code correction",
};

export const exportStage = defineStage<ExportConfig, unknown, ExportSummary>({
  name: "export",
  description:
    "writes Code-Feedback (public and full configs) and Filtered-Instruction (JSONL + Parquet) and a dataset card to <data_dir>/export/",
  // download: which revision and commit of each source the released rows came from, for the card
  // audit: the rows of an audited dataset that were no dialogue, for its verdict
  upstream: ["validate", "filter", "download", "audit"],
  kind: "global",
  configSchema: exportConfigSchema,
  // people's verdicts decide which dialogues are released: a new one makes the release stale
  // the reviewers' verdicts, by name, so that `status` can say they changed (none: the same hash as ever)
  fingerprint: ({ root }) => {
    const verdicts = verdictsDigest(root.data_dir);
    return verdicts === undefined ? undefined : { review_verdicts: verdicts };
  },
  run: exportDatasets,
  summarySchema: exportSummarySchema,
  report: exportReport,
  // its directory holds the release: `push` uploads the files it lists, and the report is written there
  release: { files: (summary) => summary.files },
});
