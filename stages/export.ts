// The release: the validated dialogues as m-a-p/Code-Feedback publishes them (`{id, messages}` and
// nothing else), the filtered single-turn pairs as m-a-p/CodeFeedback-Filtered-Instruction does
// (`{query, answer, resource, lang}`), both as JSONL and Parquet, and a dataset card, all under
// `<data_dir>/export/`. Rows are sorted (dialogues by their stable id, pairs by their source id), so
// a rerun over the same records writes the same bytes; every file is written whole or not at all.
// The stage's own outputs are one record per file written (name, rows, bytes, SHA-256).
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { codeFeedbackLine, DialogueTally, parseDialogue } from "../pipeline/dialogue.js";
import { ROLE_NAMES } from "../pipeline/llm/config.js";
import { writeReport } from "../pipeline/report/index.js";
import { defineStage, type Emitter, type StageContext } from "../pipeline/stage.js";
import { removeLeftovers, type WrittenFile, writeAtomically } from "./export/atomic.js";
import { type CardFacts, datasetCard, type SourceUse } from "./export/card.js";
import { type ExportConfig, exportConfigSchema } from "./export/config.js";
import {
  CODE_FEEDBACK_SCHEMA,
  FILTERED_INSTRUCTION_SCHEMA,
  writeParquetAtomically,
} from "./export/parquet.js";
import { EXPORT_FILES, EXPORT_STATS_FILE, type ExportStats, readExportStats } from "./export/stats.js";

type ExportContext = StageContext<ExportConfig>;

/** What an exported row is keyed by and what it says. */
interface Row<T> {
  key: string;
  row: T;
}

const byKey = <T>(a: Row<T>, b: Row<T>) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/** The validated dialogues as Code-Feedback rows; duplicates and malformed records become rejects. */
async function codeFeedbackRows(ctx: ExportContext, emit: Emitter, facts: Partial<CardFacts>) {
  const rows: Row<ReturnType<typeof codeFeedbackLine>>[] = [];
  const seen = new Set<string>();
  const tally = new DialogueTally();
  const validation: Record<string, number> = {};
  const embedders = new Set<string>();
  for await (const record of ctx.read("validate")) {
    const parsed = parseDialogue(record);
    if (!parsed.ok) {
      await emit.reject({ id: record.id, reason: "malformed-dialogue", detail: parsed.error });
      continue;
    }
    const dialogue = parsed.dialogue;
    if (seen.has(dialogue.id)) {
      await emit.reject({
        id: dialogue.id,
        reason: "duplicate-id",
        detail: "two dialogue stages emitted this id",
      });
      continue;
    }
    seen.add(dialogue.id);
    tally.add(dialogue);
    const outcome =
      (dialogue.meta.validation as { outcome?: string } | undefined)?.outcome ?? "not validated";
    validation[outcome] = (validation[outcome] ?? 0) + 1;
    if (typeof dialogue.meta.embedder === "string") embedders.add(dialogue.meta.embedder);
    rows.push({ key: dialogue.id, row: codeFeedbackLine(dialogue) });
  }
  facts.methods = tally.result();
  facts.validation = validation;
  facts.otherModels = [...embedders].sort();
  return rows.sort(byKey).map((r) => r.row);
}

interface FilteredInstruction {
  query: string;
  answer: string;
  resource: string;
  lang: string;
}

/** filter's kept pairs as Filtered-Instruction rows, with their sources counted for the card. */
async function filteredInstructionRows(ctx: ExportContext, emit: Emitter, facts: Partial<CardFacts>) {
  const rows: Row<FilteredInstruction>[] = [];
  const langs: Record<string, number> = {};
  const sources = new Map<string, SourceUse & { commitSet: Set<string> }>();
  for await (const record of ctx.read("filter")) {
    const { query, answer, resource, lang } = record;
    if (typeof query !== "string" || typeof answer !== "string" || typeof resource !== "string") {
      await emit.reject({
        id: record.id,
        reason: "malformed-instruction",
        detail: "a filtered record needs string query, answer and resource fields",
      });
      continue;
    }
    const language = typeof lang === "string" && lang !== "" ? lang : "unknown";
    langs[language] = (langs[language] ?? 0) + 1;
    const origin = (record.origin ?? {}) as { repo?: string; commit?: string };
    const key = `${resource}\n${origin.repo ?? ""}`;
    let source = sources.get(key);
    if (!source) {
      source = { resource, repo: origin.repo ?? "unknown", commits: [], rows: 0, commitSet: new Set() };
      sources.set(key, source);
    }
    source.rows++;
    if (origin.commit) source.commitSet.add(origin.commit);
    rows.push({ key: record.id, row: { query, answer, resource, lang: language } });
  }
  facts.instructionLangs = langs;
  facts.sources = [...sources.values()]
    .map(({ commitSet, ...s }) => ({ ...s, commits: [...commitSet].sort() }))
    .sort((a, b) => (a.resource < b.resource ? -1 : 1));
  return rows.sort(byKey).map((r) => r.row);
}

function* jsonLines(rows: readonly unknown[]): Generator<string> {
  for (const row of rows) yield `${JSON.stringify(row)}\n`;
}

async function exportDatasets(ctx: ExportContext, emit: Emitter): Promise<void> {
  const { config } = ctx;
  const dir = path.join(ctx.dataDir, "export");
  await removeLeftovers(dir);
  const facts: Partial<CardFacts> = { parquet: config.parquet };
  const dialogues = await codeFeedbackRows(ctx, emit, facts);
  const instructions = await filteredInstructionRows(ctx, emit, facts);
  if (ctx.signal.aborted) return;
  const written: (WrittenFile & { rows: number })[] = [];
  const at = (name: string) => path.join(dir, name);
  written.push({
    ...(await writeAtomically(at(EXPORT_FILES.codeFeedback), jsonLines(dialogues))),
    rows: dialogues.length,
  });
  written.push({
    ...(await writeAtomically(at(EXPORT_FILES.filteredInstruction), jsonLines(instructions))),
    rows: instructions.length,
  });
  if (config.parquet) {
    written.push({
      ...(await writeParquetAtomically(
        at(EXPORT_FILES.codeFeedbackParquet),
        CODE_FEEDBACK_SCHEMA,
        dialogues,
        config.row_group_size,
      )),
      rows: dialogues.length,
    });
    written.push({
      ...(await writeParquetAtomically(
        at(EXPORT_FILES.filteredInstructionParquet),
        FILTERED_INSTRUCTION_SCHEMA,
        instructions as unknown as Record<string, unknown>[],
        config.row_group_size,
      )),
      rows: instructions.length,
    });
  }
  const models: Record<string, string> = {};
  for (const role of ROLE_NAMES) models[`${role} (${ROLE_PURPOSE[role]})`] = ctx.root.llm[role].model;
  const card: CardFacts = {
    dialogues: dialogues.length,
    instructions: instructions.length,
    methods: facts.methods ?? {},
    instructionLangs: facts.instructionLangs ?? {},
    sources: facts.sources ?? [],
    models,
    otherModels: facts.otherModels ?? [],
    validation: facts.validation ?? {},
    parquet: config.parquet,
  };
  written.push({
    ...(await writeAtomically(at(EXPORT_FILES.card), [datasetCard(config.card, card)])),
    rows: 0,
  });
  for (const file of written) {
    await emit.out({
      id: file.name,
      path: path.join("export", file.name),
      rows: file.rows,
      bytes: file.bytes,
      sha256: file.sha256,
    });
  }
  const stats: ExportStats = {
    dir,
    files: written.map((f) => ({ name: f.name, rows: f.rows, bytes: f.bytes, sha256: f.sha256 })),
    code_feedback: { dialogues: dialogues.length, by_method: card.methods, validation: card.validation },
    filtered_instruction: {
      rows: instructions.length,
      by_lang: card.instructionLangs,
      by_source: Object.fromEntries(card.sources.map((s) => [s.resource, s.rows])),
    },
    models: { ...models, ...(card.otherModels.length ? { embeddings: card.otherModels.join(", ") } : {}) },
  };
  await mkdir(ctx.workDir, { recursive: true });
  await writeFile(path.join(ctx.workDir, EXPORT_STATS_FILE), JSON.stringify(stats));
}

const ROLE_PURPOSE: Record<(typeof ROLE_NAMES)[number], string> = {
  scorer: "complexity filtering",
  weak: "first answers in interaction simulation",
  strong: "feedback, fixes and code correction",
};

export const exportStage = defineStage<ExportConfig>({
  name: "export",
  description:
    "writes Code-Feedback and Filtered-Instruction (JSONL + Parquet) and a dataset card to <data_dir>/export/",
  upstream: ["validate", "filter"],
  kind: "global",
  configSchema: exportConfigSchema,
  async run(ctx, emit) {
    await exportDatasets(ctx, emit);
  },
  async summarize(ctx) {
    const stats = await readExportStats(ctx.workDir);
    if (stats) {
      ctx.log.info(
        `wrote ${stats.code_feedback.dialogues} dialogues and ${stats.filtered_instruction.rows} filtered instructions to ${stats.dir}`,
      );
    }
    const summary = { ...(stats ?? {}) };
    // The runner writes this stage's manifest after summarize returns, so the report is told export's
    // own figures rather than reading a manifest that does not say them yet.
    const report = await writeReport(ctx.dataDir, { pending: { export: { stats: summary } } });
    ctx.log.info(`report: ${report.file}`);
    return summary;
  },
});
