// One record as a reviewer sees it, in the app and in `pipeline show`: its turns (a filtered pair as a
// query and an answer), each fenced code block with validate's result for it, the gates' verdicts,
// where it came from, the same id and its sources in the other stages, and people's marks on it.
import { extractCodeBlocks } from "../code/extract.js";
import type { PipelineRecord, Reject } from "../record.js";
import { contentHash, type Mark, type MarksStore } from "./marks.js";
import type { Kind, ReviewIndex, ReviewSource, Row, StageLook } from "./records.js";

export interface BlockView {
  lang: string;
  code: string;
  /**
   * validate's result for this block: outcome, error, harness, seconds, a limit the sandbox enforced,
   * and what the sandbox returned (exit_code, signal, stdout, stderr clipped with *_cut, peak_memory_kb)
   */
  result?: Record<string, unknown>;
}

export interface MessageView {
  role: string;
  content: string;
  blocks: BlockView[];
}

export interface LinkView {
  stage: string;
  kind: Kind;
  id: string;
  /** the same record, one it was made from, or one made from it */
  relation: "same" | "source" | "made from it";
  /** a reject's reason */
  reason?: string;
  /** for a dialogue the release is made from: whether it is in the release (see releaseOf) */
  release?: string;
}

/** The stage that makes the release, the stage it releases from, and where the former stands. */
type ReleaseLook = NonNullable<ReviewSource["release"]> & { state: string };

export interface RecordView {
  stage: string;
  kind: Kind;
  id: string;
  state: string;
  stateReason?: string | undefined;
  /** a reject's reason and detail */
  reject?: { reason: string; detail?: string | undefined };
  messages: MessageView[];
  validation?: { outcome?: unknown; reason?: unknown; error?: unknown; gates: unknown[] };
  /** every other field: method, sources, models, prompts, scores, meta */
  provenance: Record<string, unknown>;
  links: LinkView[];
  /** for a dialogue the release is made from: whether it is in the release (see releaseOf) */
  release?: string;
  hash: string;
  /** every mark on the id, oldest first, each saying whether it judged other content than this */
  marks: (Mark & { stale: boolean })[];
}

/** `meta.validation` as validate writes it: the view's, with each block's result */
type Validation = Partial<NonNullable<RecordView["validation"]>> & { blocks?: unknown[] };

function messagesOf(record: Record<string, unknown>, validation: Validation | undefined): MessageView[] {
  const results = (validation?.blocks ?? []) as { message?: number; block?: number }[];
  const turns: { role: string; content: string }[] = Array.isArray(record.messages)
    ? (record.messages as { role?: unknown; content?: unknown }[]).map((m) => ({
        role: String(m.role ?? ""),
        content: typeof m.content === "string" ? m.content : JSON.stringify(m.content),
      }))
    : [
        ...(typeof record.query === "string" ? [{ role: "user", content: record.query }] : []),
        ...(typeof record.answer === "string" ? [{ role: "assistant", content: record.answer }] : []),
      ];
  return turns.map((turn, message) => ({
    ...turn,
    blocks: extractCodeBlocks(turn.content)
      .filter((b) => b.fenced)
      .map((b, block) => {
        const result = results.find((r) => r.message === message && r.block === block);
        return {
          lang: b.lang ?? (b.tag || "text"),
          code: b.code,
          ...(result ? { result: result as Record<string, unknown> } : {}),
        };
      }),
  }));
}

const SHOWN_ELSEWHERE = new Set(["id", "messages", "query", "answer"]);

export function recordView(
  index: ReviewIndex,
  marks: MarksStore | undefined,
  look: StageLook,
  found: { row: Row; record: PipelineRecord | Reject },
  release?: ReleaseLook,
): RecordView {
  const { row } = found;
  const reject = row.kind === "r" ? (found.record as Reject) : undefined;
  const record = (reject ? (reject.record ?? {}) : found.record) as Record<string, unknown>;
  const meta = (record.meta ?? {}) as { validation?: Validation };
  const validation = meta.validation;
  const provenance: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) {
    if (SHOWN_ELSEWHERE.has(key)) continue;
    if (key === "meta") {
      const { validation: _, ...rest } = value as Record<string, unknown>;
      if (Object.keys(rest).length) provenance.meta = rest;
    } else provenance[key] = value;
  }
  const links: LinkView[] = [];
  const seen = new Set<string>([`${row.stage}\n${row.kind}\n${row.id}`]);
  const add = (r: Row, relation: LinkView["relation"]) => {
    const key = `${r.stage}\n${r.kind}\n${r.id}`;
    if (seen.has(key)) return;
    seen.add(key);
    const released = releaseOf(index, release, r);
    links.push({
      stage: r.stage,
      kind: r.kind,
      id: r.id,
      relation,
      ...(r.kind === "r" && r.reason ? { reason: r.reason } : {}),
      ...(released ? { release: released } : {}),
    });
  };
  for (const r of index.find(row.id)) add(r, "same");
  const sources = Array.isArray(record.sources) ? record.sources.filter((s) => typeof s === "string") : [];
  for (const source of sources) for (const r of index.find(source)) add(r, "source");
  for (const r of index.madeFrom(row.id)) add(r, "made from it");
  const hash = contentHash(reject ? (reject.record ?? reject) : record);
  const inRelease = releaseOf(index, release, row);
  return {
    stage: row.stage,
    kind: row.kind,
    id: row.id,
    state: look.state,
    ...(look.reason ? { stateReason: look.reason } : {}),
    ...(reject ? { reject: { reason: reject.reason, detail: reject.detail } } : {}),
    messages: messagesOf(record, validation),
    ...(validation
      ? {
          validation: {
            outcome: validation.outcome,
            reason: validation.reason,
            error: validation.error,
            gates: validation.gates ?? [],
          },
        }
      : {}),
    provenance,
    links,
    ...(inRelease ? { release: inRelease } : {}),
    hash,
    marks: (marks?.history(row.id) ?? []).map((m) => ({ ...m, stale: m.hash !== hash })),
  };
}

/**
 * Whether an output of the stage the release is made from is in it: once that stage is complete, yes
 * unless it rejected the id (its reason then); before, that it cannot say yet. Undefined for other rows.
 */
function releaseOf(index: ReviewIndex, release: ReleaseLook | undefined, row: Row): string | undefined {
  if (!release || row.stage !== release.from || row.kind !== "o") return undefined;
  if (release.state !== "complete") return `${release.stage} is ${release.state}: not known yet`;
  const refused = index.find(row.id).find((r) => r.stage === release.stage && r.kind === "r");
  return refused
    ? `not in the release: ${release.stage} rejected it (${refused.reason ?? "no reason"})`
    : "in the release";
}

const clip = (text: string, max: number) =>
  text.length > max ? `${text.slice(0, max)}… (${text.length - max} more characters)` : text;

/** A block's run as one line: exit status, seconds, memory, how it was run. */
function runLine(r: Record<string, unknown>): string {
  const parts: string[] = [];
  if (r.exit_code !== undefined)
    parts.push(r.exit_code === null ? "no exit status" : `exit ${String(r.exit_code)}`);
  if (r.signal) parts.push(`signal ${String(r.signal)}`);
  if (typeof r.time_s === "number") parts.push(`${r.time_s.toFixed(3)} s`);
  if (typeof r.peak_memory_kb === "number") parts.push(`${(r.peak_memory_kb / 1024).toFixed(1)} MiB`);
  if (r.harness) parts.push(String(r.harness));
  if (r.stopped) parts.push(`stopped: ${String(r.stopped)}`);
  return parts.join(", ");
}

/** A stream as validate kept it: whole, or its head and tail with the cut validate counted. */
function streamLines(name: string, r: Record<string, unknown>, indent: string): string[] {
  const text = r[name];
  if (typeof text !== "string") return [];
  const cut = r[`${name}_cut`];
  const note = typeof cut === "number" ? ` (${cut} characters cut by validate)` : "";
  return [
    `${indent}${name}${note}:`,
    ...text
      .replace(/\n$/, "")
      .split("\n")
      .map((l) => `${indent}  ${l}`),
  ];
}

/** The view as text, for a terminal. */
export function viewText(view: RecordView): string[] {
  const lines = [
    `${view.stage} ${view.kind === "r" ? "reject" : "record"} ${view.id} (stage ${view.state}${view.stateReason ? `: ${view.stateReason}` : ""})`,
  ];
  if (view.reject)
    lines.push(`rejected: ${view.reject.reason}${view.reject.detail ? ` (${view.reject.detail})` : ""}`);
  if (view.release) lines.push(`release: ${view.release}`);
  if (view.validation) {
    const v = view.validation;
    lines.push(
      `validation: ${String(v.outcome)}${v.reason ? ` (${String(v.reason)})` : ""}${v.error ? `: ${String(v.error)}` : ""}`,
    );
    for (const gate of v.gates as { rule?: string; message?: number; detail?: string }[])
      lines.push(`  gate ${gate.rule} at message ${gate.message}: ${gate.detail ?? ""}`);
  }
  view.messages.forEach((m, i) => {
    lines.push("", `--- ${i} ${m.role}`, clip(m.content, 20_000));
    m.blocks.forEach((b, j) => {
      const r = b.result;
      if (!r) {
        lines.push(`  [block ${j}, ${b.lang}] not run by validate`);
        return;
      }
      const run = runLine(r);
      lines.push(
        `  [block ${j}, ${b.lang}] ${String(r.outcome)}${r.reason ? ` (${String(r.reason)})` : ""}` +
          `${run ? `, ${run}` : ""}${r.error ? `: ${clip(String(r.error), 500)}` : ""}`,
        ...streamLines("stdout", r, "    "),
        ...streamLines("stderr", r, "    "),
      );
      if (r.truncated) lines.push("    (the sandbox kept only its output cap: the program printed more)");
    });
  });
  lines.push("", "provenance:");
  for (const [key, value] of Object.entries(view.provenance))
    lines.push(`  ${key}: ${clip(typeof value === "string" ? value : JSON.stringify(value), 2_000)}`);
  if (view.links.length) {
    lines.push("", "elsewhere:");
    for (const l of view.links)
      lines.push(
        `  ${l.relation}: ${l.stage} ${l.kind === "r" ? "reject " : ""}${l.id}` +
          `${l.reason ? ` (${l.reason})` : ""}${l.release ? `: ${l.release}` : ""}`,
      );
  }
  if (view.marks.length) {
    lines.push("", "marks:");
    for (const m of view.marks)
      lines.push(
        `  ${m.at} ${m.reviewer}: ${m.verdict}${m.reason ? ` (${m.reason})` : ""}${m.note ? ` "${m.note}"` : ""}${m.stale ? " [stale: the record changed since]" : ""}`,
      );
  }
  return lines.map(terminalSafe);
}

/** Control characters (an escape sequence could rewrite the terminal) shown as `\xNN`, newlines and tabs kept. */
export function terminalSafe(text: string): string {
  return text.replace(
    /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g,
    (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`,
  );
}
