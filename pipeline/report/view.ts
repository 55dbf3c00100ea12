// The view of a run the report hands each stage's report parts (contract.ts). A stage's summary is read
// only through its `summarySchema`, once. A part reads its own stage's summary and those its section
// declares (`reads`), nothing else; where one of those no longer parses, the report puts the note
// "summary unreadable (reason)" at the top of the section, so it is never shown as an empty one.
import { talliesOf } from "../dialogue.js";
import type { StageRegistry } from "../registry.js";
import type { StageCounts } from "../store/manifest.js";
import type { ReportingStage, ReportView, StageRow, StageView, Summarized } from "./contract.js";
import { missing, notRun } from "./html.js";

/** The state of a stage the config switches off. */
export const DISABLED = "not run (disabled)";

/** A summary read through its stage's schema: none, the typed summary, or why it does not read. */
export type SummaryRead<S> = { ok: true; summary: S } | { ok: false; reason: string } | undefined;

export interface ViewSource {
  registry: StageRegistry<ReportingStage>;
  stages: readonly StageRow[];
  disabled: readonly string[];
  /** a stage's summary as its manifest (or the finishing stage) gives it, unchecked */
  rawSummary(stage: string): unknown;
}

/** The report's own view (it may read every summary), and the views it hands the stages' parts. */
export interface RunView extends ReportView {
  /**
   * The view a part of `stage`'s report gets: its own summary and, for its section `section`, the
   * summaries that section `reads`.
   */
  forStage<S>(stage: ReportingStage<S>, section?: string): StageView<S>;
  /** [stage, reason] for each of `stages` whose summary does not read */
  unreadable(stages: readonly Summarized<unknown>[]): [string, string][];
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

/** The stages whose summaries a part of `stage`'s report reads: its own, and those its section declares. */
export function readsOf(
  registry: StageRegistry<ReportingStage>,
  stage: ReportingStage,
  section?: string,
): Summarized<unknown>[] {
  if (section === undefined) return [stage];
  const declared = stage.report?.sections?.find((s) => s.id === section);
  if (!declared) throw new Error(`stage ${stage.name} has no report section ${section}`);
  const reads = declared.reads;
  return [stage, ...(typeof reads === "function" ? reads(registry) : (reads ?? []))];
}

/** The text of the note for stages whose summary does not read. */
export function unreadableText(reasons: readonly [string, string][]): string {
  const names = reasons.map(([name]) => name);
  return (
    `summary unreadable (${reasons.map(([name, reason]) => `${name}: ${reason}`).join("; ")}); ` +
    `rerun \`pnpm pipeline run ${names.join(" ")} --force\` to write it in this version's shape`
  );
}

export function makeView(source: ViewSource): RunView {
  const { registry, stages, disabled } = source;
  const reads = new Map<string, SummaryRead<unknown>>();
  const row = (name: string) => stages.find((s) => s.name === name);
  const ran = (name: string) => {
    const state = row(name)?.state;
    return state !== undefined && state !== "not run" && state !== DISABLED;
  };
  // a stage switched off has no summary to read, whatever manifest an earlier run left
  const read = (stage: Summarized<unknown>): SummaryRead<unknown> => {
    if (!reads.has(stage.name))
      reads.set(stage.name, ran(stage.name) ? readSummary(stage, source.rawSummary(stage.name)) : undefined);
    return reads.get(stage.name);
  };
  const reasonFor = (stage: Summarized<unknown> | undefined): string | undefined => {
    const result = stage && read(stage);
    return result && !result.ok ? result.reason : undefined;
  };
  /** a view that reads the summaries of `allowed` only (every one: undefined), for `reader` */
  const viewOf = (allowed: ReadonlySet<string> | undefined, reader: string): ReportView => {
    const view: ReportView = {
      registry,
      disabled,
      ran,
      counts: (name): StageCounts | undefined => row(name)?.counts,
      summaryOf<S>(stage: Summarized<S>): S | undefined {
        if (allowed && !allowed.has(stage.name)) {
          throw new Error(`${reader} reads ${stage.name}'s summary without declaring it in its \`reads\``);
        }
        const result = read(stage as Summarized<unknown>);
        return result?.ok ? (result.summary as S) : undefined;
      },
      madeBy(stage) {
        const summary = view.summaryOf(stage);
        return summary && stage.methods ? talliesOf(summary, registry.methodsOf(stage.name)) : undefined;
      },
      missing(id, ...names) {
        // a summary the section reads and cannot is named by the note at the section's top
        const pending = names.filter(
          (name) => !(allowed?.has(name) ?? true) || reasonFor(registry.stage(name)) === undefined,
        );
        return names.length > 0 && pending.length === 0 ? "" : missing(id, notRun(stages, ...pending));
      },
    };
    return view;
  };
  return {
    ...viewOf(undefined, "the report"),
    forStage<S>(stage: ReportingStage<S>, section?: string): StageView<S> {
      const allowed = new Set(readsOf(registry, stage as ReportingStage, section).map((s) => s.name));
      const view = viewOf(
        allowed,
        `${stage.name}'s report${section === undefined ? "" : ` section ${section}`}`,
      );
      return { ...view, name: stage.name, summary: view.summaryOf(stage) };
    },
    unreadable: (of) =>
      of.flatMap((stage): [string, string][] => {
        const reason = reasonFor(stage);
        return reason === undefined ? [] : [[stage.name, reason]];
      }),
  };
}

/** Puts the note of `unreadable` at the top of a rendered section, under its heading (or makes one). */
export function withUnreadableNote(
  id: string,
  html: string,
  unreadable: readonly [string, string][],
): string {
  if (unreadable.length === 0) return html;
  const note = missing(`summary-${id}`, unreadableText(unreadable));
  const heading = html.indexOf("</h2>") + "</h2>".length;
  return heading >= "</h2>".length
    ? `${html.slice(0, heading)}${note}${html.slice(heading)}`
    : `<section id="${id}">${note}</section>${html}`;
}
