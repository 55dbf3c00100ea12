// The view of a run the report hands each stage's report parts (contract.ts). A stage's summary is read
// only through its `summarySchema`, once; one that no longer parses is never shown as an empty
// section: a section that reads it says "summary unreadable (reason)", by its own `missing` note or,
// where it did not ask for one, by a note the report adds to the end of the section.
import type { StageRegistry } from "../registry.js";
import type { StageCounts } from "../store/manifest.js";
import type { ReportingStage, ReportView, StageRow, StageView, Summarized } from "./contract.js";
import { missing, notRun } from "./html.js";

/** The state of a stage the config switches off. */
export const DISABLED = "not run (disabled)";

/** A summary read through its stage's schema: none, the typed summary, or why it does not read. */
export type SummaryRead<S> = { ok: true; summary: S } | { ok: false; reason: string } | undefined;
type Read = SummaryRead<unknown>;

export interface ViewSource {
  registry: StageRegistry<ReportingStage>;
  stages: readonly StageRow[];
  disabled: readonly string[];
  /** a stage's summary as its manifest (or the finishing stage) gives it, unchecked */
  rawSummary(stage: string): unknown;
}

/** The report's view, with what it needs to note unreadable summaries where they were read. */
export interface TrackedView extends ReportView {
  /**
   * Runs `render` (a section, or the flow chart's parts) and returns what it rendered with the
   * stages whose unreadable summary it read without saying so.
   */
  scope<T>(render: () => T): { value: T; unnoted: [string, string][] };
  /** the view as stage `stage`'s own report parts get it */
  forStage<S>(stage: ReportingStage<S>): StageView<S>;
}

/** The first problem zod found, as `path: message` (and how many more there are). */
function reasonOf(error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] }): string {
  const [first, ...rest] = error.issues;
  if (!first) return "does not parse";
  const where = first.path.map(String).join(".");
  return `${where ? `${where}: ` : ""}${first.message}${rest.length ? ` (and ${rest.length} more)` : ""}`;
}

/** A stage's summary (as its manifest keeps it) read through the stage's `summarySchema`. */
export function readSummary<S>(stage: Summarized<S>, raw: unknown): SummaryRead<S> {
  if (raw === undefined || raw === null) return undefined;
  if (!stage.summarySchema) return { ok: true, summary: raw as S };
  const parsed = stage.summarySchema.safeParse(raw);
  return parsed.success ? { ok: true, summary: parsed.data } : { ok: false, reason: reasonOf(parsed.error) };
}

/** The text of the note for stages whose summary does not read. */
export function unreadableText(reasons: readonly [string, string][]): string {
  const names = reasons.map(([name]) => name);
  return (
    `summary unreadable (${reasons.map(([name, reason]) => `${name}: ${reason}`).join("; ")}); ` +
    `rerun \`pnpm pipeline run ${names.join(" ")} --force\` to write it in this version's shape`
  );
}

export function makeView(source: ViewSource): TrackedView {
  const { registry, stages, disabled } = source;
  const reads = new Map<string, Read>();
  let asked = new Set<string>();
  let noted = new Set<string>();
  const row = (name: string) => stages.find((s) => s.name === name);
  const ran = (name: string) => {
    const state = row(name)?.state;
    return state !== undefined && state !== "not run" && state !== DISABLED;
  };
  const read = (stage: Summarized<unknown>): Read => {
    if (!reads.has(stage.name)) reads.set(stage.name, readSummary(stage, source.rawSummary(stage.name)));
    const result = reads.get(stage.name);
    if (result && !result.ok) asked.add(stage.name);
    return result;
  };
  const unreadable = (name: string): string | undefined => {
    const stage = registry.stage(name);
    const result = reads.has(name) ? reads.get(name) : stage ? read(stage) : undefined;
    return result && !result.ok ? result.reason : undefined;
  };
  const view: TrackedView = {
    registry,
    stages,
    disabled,
    ran,
    counts: (name): StageCounts | undefined => row(name)?.counts,
    summaryOf<S>(stage: Summarized<S>): S | undefined {
      const result = read(stage as Summarized<unknown>);
      return result?.ok ? (result.summary as S) : undefined;
    },
    madeBy(stage) {
      if (!ran(stage.name) || !stage.report?.made) return undefined;
      const summary = view.summaryOf(stage);
      return summary === undefined ? undefined : stage.report.made(summary);
    },
    missing(id, ...names) {
      const reasons = names.flatMap((name): [string, string][] => {
        const reason = unreadable(name);
        return reason === undefined ? [] : [[name, reason]];
      });
      for (const [name] of reasons) noted.add(name);
      return missing(id, reasons.length ? unreadableText(reasons) : notRun(stages, ...names));
    },
    scope(render) {
      const outer = [asked, noted];
      asked = new Set();
      noted = new Set();
      try {
        const value = render();
        const unnoted = [...asked].filter((name) => !noted.has(name));
        return { value, unnoted: unnoted.map((name): [string, string] => [name, unreadable(name) ?? ""]) };
      } finally {
        [asked, noted] = outer as [Set<string>, Set<string>];
      }
    },
    forStage<S>(stage: ReportingStage<S>): StageView<S> {
      // the own summary is read when a part asks for it, so the note goes where it was read
      const own = Object.create(view) as StageView<S>;
      Object.defineProperty(own, "name", { value: stage.name });
      Object.defineProperty(own, "summary", { get: () => view.summaryOf(stage) });
      return own;
    },
  };
  return view;
}

/** Adds the unreadable-summary note of `unnoted` to a rendered section (or makes one, when it is empty). */
export function withUnreadableNote(id: string, html: string, unnoted: readonly [string, string][]): string {
  if (unnoted.length === 0) return html;
  const note = missing(`summary-${id}`, unreadableText(unnoted));
  const end = "</section>";
  return html.endsWith(end)
    ? `${html.slice(0, -end.length)}${note}${end}`
    : `${html}<section id="${id}">${note}</section>`;
}
