// Auditing a dialogue dataset: each source with `adapter: dialogues` holds finished dialogues (Code-Feedback's
// `{id, messages}`, a chat shape, or this pipeline's own export) and becomes a dialogue method named after
// it. Its rows are read as dialogues, not made into queries; validate then runs their code like any
// method's, and export releases those that pass under their original ids.
import { z } from "zod";
import { extractCodeBlocks } from "../pipeline/code/index.js";
import type { RootConfig } from "../pipeline/config/schema.js";
import {
  type DialogueMethod,
  DialogueTally,
  dialogueProblems,
  dialogueTallySchema,
  type MethodTally,
  makeDialogue,
} from "../pipeline/dialogue.js";
import type { RawRow } from "../pipeline/readers/index.js";
import type { PipelineRecord, RecordOutcome } from "../pipeline/record.js";
import { outputsStep } from "../pipeline/report/flow.js";
import { defineStage, type StageContext } from "../pipeline/stage.js";
import { downloadConfigSchema } from "./download.js";
import { downloadedRows } from "./normalize.js";
import { type ChatKeys, type ChatTurn, chatTurns, detectChatKeys, isObject } from "./sources/chat.js";
import type { SourceSpec } from "./sources/source.js";

/** The adapter that marks a source as a dialogue dataset to audit. */
const DIALOGUES_ADAPTER = "dialogues";

export const auditConfigSchema = z
  .object({
    /** keep a dialogue with no code block at all (its verdict: `no-code`); false drops it with that reason */
    keep_no_code: z.boolean().default(true),
    /** a dialogue with more turns (messages) than this is rejected (`too-many-turns`) */
    max_turns: z.number().int().positive().default(1000),
    /** a raw row longer than this many bytes is rejected (`row-too-large`) without being held in memory */
    max_row_bytes: z
      .number()
      .int()
      .positive()
      .default(8 * 1_048_576),
  })
  .strict();
export type AuditConfig = z.infer<typeof auditConfigSchema>;

/** The sources with `adapter: dialogues` of a config. */
function dialogueSources(root: RootConfig): SourceSpec[] {
  const download = downloadConfigSchema.safeParse(root.stages.download ?? {});
  return download.success ? download.data.sources.filter((s) => s.adapter === DIALOGUES_ADAPTER) : [];
}

/** Where a source lives, as the card and the verdict name it: its local path, else its hub repo. */
const whereOf = (source: SourceSpec): string => source.path ?? source.repo ?? "";

/** One method per source with `adapter: dialogues`, named after the source (and its ids' prefix). */
function auditedMethods(root: RootConfig): DialogueMethod[] {
  return dialogueSources(root).map((s) => ({
    name: s.name,
    prefix: s.name,
    card: `the dialogues of ${whereOf(s)}, taken as found and audited`,
    audited: { where: whereOf(s) },
  }));
}

/** An input record of `audit`: a raw row of a dialogue file and where it sits. */
interface DialogueRowRecord extends PipelineRecord {
  /** `<source>:<row>`, the row counted across the source's files */
  id: string;
  source: string;
  file: string;
  row: RawRow;
}

async function* dialogueRows(ctx: StageContext<AuditConfig>): AsyncGenerator<DialogueRowRecord> {
  for await (const { id, file, row } of downloadedRows(ctx, (f) => f.adapter === DIALOGUES_ADAPTER)) {
    yield { id, source: file.source, file: file.path, row };
  }
}

/** The id a row gives itself (this pipeline's export: `dialogue_id`; Code-Feedback: `id`), if any. */
function ownId(row: Record<string, unknown>): string | undefined {
  for (const key of ["dialogue_id", "id"]) {
    const value = row[key];
    if ((typeof value === "string" && value.trim() !== "") || typeof value === "number") return String(value);
  }
  return undefined;
}

/** The language of a dialogue's code: the row's own `lang`, else that of its last fenced block that names one. */
function languageOf(row: Record<string, unknown>, turns: readonly ChatTurn[]): string {
  if (typeof row.lang === "string" && row.lang !== "") return row.lang;
  let lang = "unknown";
  for (const turn of turns) {
    if (turn.role !== "assistant") continue;
    for (const block of extractCodeBlocks(turn.content)) if (block.fenced && block.lang) lang = block.lang;
  }
  return lang;
}

const hasCode = (turns: readonly ChatTurn[]) =>
  turns.some(
    (t) =>
      t.role === "assistant" && extractCodeBlocks(t.content).some((b) => b.fenced && b.code.trim() !== ""),
  );

/** One raw row to a dialogue of its source's method, or a reject saying why it is not one. */
export function auditRow(
  input: DialogueRowRecord,
  method: DialogueMethod,
  config: AuditConfig,
  given: Partial<ChatKeys> = {},
): RecordOutcome {
  const { row } = input;
  const reject = (reason: string, detail: string, record?: unknown): RecordOutcome => ({
    rejects: [{ id: input.id, reason, detail, ...(record === undefined ? {} : { record }) }],
  });
  if (row.error) return reject(row.error.reason, `${input.file}: ${row.error.detail}`, row.error.prefix);
  const value = row.value;
  if (!isObject(value)) {
    const kind = value === null ? "null" : Array.isArray(value) ? "a list" : typeof value;
    return reject("not-an-object", `${input.file}, row ${row.index} is ${kind}, expected an object`);
  }
  const keys = detectChatKeys(value, given);
  if (!keys) {
    return reject(
      "no-turns",
      `${input.file}, row ${row.index} has no list of turns under \`messages\` or \`conversations\``,
    );
  }
  const listed = value[keys.field] as unknown[];
  if (listed.length > config.max_turns) {
    return reject(
      "too-many-turns",
      `${input.file}, row ${row.index} has ${listed.length} turns, over stages.audit.max_turns (${config.max_turns})`,
    );
  }
  const read = chatTurns(value, keys, row.index);
  if ("reject" in read) return reject(read.reject, `${input.file}: ${read.detail}`);
  const turns = [...read.turns];
  // this pipeline's full export keeps a dialogue's system prompt in its own column
  if (typeof value.system === "string" && value.system !== "" && turns[0]?.role !== "system") {
    turns.unshift({ role: "system", content: value.system });
  }
  const problems = dialogueProblems(turns);
  if (problems.length > 0)
    return reject("malformed-dialogue", `${input.file}, row ${row.index}: ${problems.join("; ")}`);
  if (!config.keep_no_code && !hasCode(turns)) {
    return reject("no-code", `${input.file}, row ${row.index}: no assistant turn has a code block`);
  }
  const id = `${input.source}:${ownId(value) ?? input.id.slice(input.source.length + 1)}`;
  return {
    out: [
      makeDialogue({
        method,
        id,
        sources: [id],
        messages: turns,
        lang: languageOf(value, turns),
        meta: { origin: { where: method.audited?.where ?? "", file: input.file, row: row.index } },
      }),
    ],
  };
}

/** Per source: its method, and the chat keys its config sets (the rest are detected row by row). */
type AuditRun = Map<string, { method: DialogueMethod; keys: Partial<ChatKeys> }>;

export const auditStage = defineStage<AuditConfig, AuditRun, Record<string, MethodTally>>({
  name: "audit",
  description:
    "reads the dialogue datasets to audit (sources with adapter: dialogues) as dialogues, for validate",
  methods: auditedMethods,
  upstream: ["download"],
  kind: "record",
  configSchema: auditConfigSchema,
  fingerprint: ({ limit }) => ({ limit: limit ?? null }),
  // a single lane keeps the dialogues in the order of the rows
  concurrency: () => 1,
  input: (ctx) => dialogueRows(ctx),
  open(ctx) {
    const methods = ctx.registry.methodsOf("audit");
    const run: AuditRun = new Map();
    for (const source of dialogueSources(ctx.root)) {
      const method = methods.find((m) => m.name === source.name)!;
      run.set(source.name, { method, keys: source.chat ?? {} });
    }
    return run;
  },
  async process(record, ctx, run) {
    const input = record as DialogueRowRecord;
    const source = run.get(input.source);
    // download completes for the config of this run: its files are of this config's sources
    if (!source) throw new Error(`source ${input.source} is not a dialogues source of this config`);
    return auditRow(input, source.method, ctx.config, source.keys);
  },
  summarize: async (ctx) =>
    (await DialogueTally.of(ctx.registry.methodsOf("audit"), ctx.read(ctx.name))).result(),
  summarySchema: dialogueTallySchema,
  report: { flow: outputsStep("audited dialogues") },
});
