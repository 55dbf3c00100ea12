// What export reads and what it makes of it: the validated dialogues as rows of the public
// `code-feedback` config and of the richer `code-feedback-full` one, filter's pairs as
// Filtered-Instruction rows, and, for the card, which sources the released rows came from (by the
// source name every record id starts with, looked up in what download fetched).
import { codeFeedbackLine, type Dialogue, DialogueTally, parseDialogue } from "../../pipeline/dialogue.js";
import type { Emitter, StageContext } from "../../pipeline/stage.js";
import { DEFAULT_SOURCES, type DownloadedFileRecord, filesFingerprint } from "../download.js";
import type { ExportConfig } from "./config.js";
import { releaseIds } from "./ids.js";
import type { ReleaseReview } from "./review.js";
import type { SourceUse } from "./stats.js";

type ExportContext = StageContext<ExportConfig>;

type CodeFeedbackRow = ReturnType<typeof codeFeedbackLine>;

export interface CodeFeedbackFullRow extends CodeFeedbackRow {
  /** the dialogue's stable string id in the pipeline (`pack-…`, `sim-…`) */
  dialogue_id: string;
  method: string;
  lang: string;
  /** ids of the records it was built from */
  sources: string[];
  /** the leading system message the public `messages` leave out, if the dialogue had one */
  system: string | null;
  /** validate's outcome for the final code */
  validation: string;
  /** validate's quality tags on the dialogue */
  validation_tags: string[];
}

export interface FilteredInstruction {
  query: string;
  answer: string;
  resource: string;
  lang: string;
}

/** The source name a record id starts with: `magicoder:000123`, `taco:train-0001:000042`. */
export const sourceOf = (id: string): string => id.slice(0, Math.max(0, id.indexOf(":"))) || id;

const byKey = (a: { key: string }, b: { key: string }) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/** Validate's outcome and the quality-gate rules it tagged a dialogue with, as its `meta.validation` has them. */
type Validation = { outcome?: string; gates?: { rule: string }[] } | undefined;

/** The validated dialogues in the order of their string ids; duplicates and malformed records become rejects. */
export async function readDialogues(ctx: ExportContext, emit: Emitter, review?: ReleaseReview) {
  const dialogues: Dialogue[] = [];
  const seen = new Set<string>();
  const tally = new DialogueTally(ctx.registry.methods);
  const validation: Record<string, number> = {};
  const embedders = new Set<string>();
  for await (const record of ctx.read("validate")) {
    const parsed = parseDialogue(record, ctx.registry.methods);
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
    const marked = review?.judge(dialogue);
    if (marked) {
      await emit.reject(marked);
      continue;
    }
    dialogues.push(dialogue);
  }
  dialogues.sort((a, b) => byKey({ key: a.id }, { key: b.id }));
  // counted in id order, not validate's (which follows its concurrency): ties in the card keep one order
  for (const dialogue of dialogues) {
    tally.add(dialogue);
    const outcome = (dialogue.meta.validation as Validation)?.outcome ?? "not validated";
    validation[outcome] = (validation[outcome] ?? 0) + 1;
    if (typeof dialogue.meta.embedder === "string") embedders.add(dialogue.meta.embedder);
  }
  return { dialogues, tally, validation, embedders: [...embedders].sort() };
}

/** Both configs' rows of the dialogues, in the same order (that of the string ids). */
export function dialogueRows(dialogues: readonly Dialogue[], keepSystem: boolean) {
  const ids = releaseIds(dialogues.map((d) => d.id));
  const public_: CodeFeedbackRow[] = [];
  const full: CodeFeedbackFullRow[] = [];
  for (const d of dialogues) {
    const line = codeFeedbackLine(d, ids.get(d.id)!, { keepSystem });
    const validation = d.meta.validation as Validation;
    public_.push(line);
    full.push({
      id: line.id,
      dialogue_id: d.id,
      method: d.method,
      lang: d.lang,
      sources: [...d.sources],
      messages: line.messages,
      system: d.messages[0]?.role === "system" ? d.messages[0].content : null,
      validation: validation?.outcome ?? "not validated",
      validation_tags: [...new Set((validation?.gates ?? []).map((g) => g.rule))].sort(),
    });
  }
  return { public: public_, full };
}

/** filter's kept pairs as Filtered-Instruction rows (in the order of their ids) and their languages. */
export async function readInstructions(ctx: ExportContext, emit: Emitter) {
  const rows: { key: string; row: FilteredInstruction; origin: { repo?: string; commit?: string } }[] = [];
  const langs: Record<string, number> = {};
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
    rows.push({ key: record.id, row: { query, answer, resource, lang: language }, origin });
  }
  rows.sort(byKey);
  return { rows, langs };
}

/**
 * The sources the release was made from: every source name a filtered row or a released dialogue's
 * sources start with, with the repo, revision and commit download fetched it at (else what the
 * filtered rows' origin says), by name: download commits its files in the order they finish, so its
 * order differs from run to run and would reorder the card.
 */
export async function sourcesUsed(
  ctx: ExportContext,
  instructions: Awaited<ReturnType<typeof readInstructions>>["rows"],
  dialogues: readonly Dialogue[],
): Promise<SourceUse[]> {
  const uses = new Map<string, SourceUse & { commitSet: Set<string> }>();
  const use = (name: string) => {
    if (!uses.has(name)) {
      const fresh = { name, repo: "unknown", revision: "", commits: [], rows: 0, dialogues: 0 };
      uses.set(name, { ...fresh, commitSet: new Set() });
    }
    return uses.get(name)!;
  };
  for (const { key, origin } of instructions) {
    const u = use(sourceOf(key));
    u.rows++;
    if (origin.repo && u.repo === "unknown") u.repo = origin.repo;
    if (origin.commit) u.commitSet.add(origin.commit);
  }
  for (const d of dialogues) for (const name of new Set(d.sources.map(sourceOf))) use(name).dialogues++;
  const local = new Map<string, DownloadedFileRecord[]>();
  for await (const record of ctx.read("download")) {
    const file = record as DownloadedFileRecord;
    const name = String(file.source ?? "");
    const u = uses.get(name);
    if (!u) continue;
    if (!DEFAULT_SOURCES.some((d) => d.name === name && d.repo === file.repo)) u.adapter = file.adapter;
    if (file.repo === undefined) {
      u.repo = "local";
      u.path = file.source_path ?? file.path;
      local.set(name, [...(local.get(name) ?? []), file]);
      continue;
    }
    u.repo = String(file.repo ?? u.repo);
    u.revision = String(file.revision ?? "");
    // download's commit is the one every file of the source was fetched at
    u.commitSet.clear();
    if (typeof file.commit === "string") u.commitSet.add(file.commit);
  }
  for (const [name, files] of local) uses.get(name)!.fingerprint = filesFingerprint(files);
  return [...uses.values()]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map(({ commitSet, ...u }) => ({ ...u, commits: [...commitSet].sort() }));
}
