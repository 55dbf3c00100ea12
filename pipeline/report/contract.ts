// What a stage declares for the run report (`report: { flow, underFlow, sections }`), and the
// view of the run the report hands it. The report knows no stage: it reads a summary only through its
// stage's `summarySchema`, and hands each part its own typed summary and those of the stages its
// section declares it `reads`. A summary that does not parse is noted at the section's top.
import type { z } from "zod";
import type { RegisteredStage, StageRegistry } from "../registry.js";
import type { StageCounts } from "../store/manifest.js";
import type { UsageTotals } from "../usage.js";

/** One row of the report's stages table. */
export interface StageRow {
  name: string;
  /** complete, partial, running, stale (as the runner judges it), "not run", or "not run (disabled)" */
  state: string;
  reason?: string | undefined;
  counts?: StageCounts | undefined;
  usage?: UsageTotals | undefined;
  elapsedMs?: number | undefined;
  finishedAt?: string | undefined;
}

/** A step of the flow chart: the records after it (undefined: the stage has not run, or did not say). */
export interface FlowStep {
  label: string;
  stage: string;
  records?: number | undefined;
}

/** Dialogues and turns per method, by the method's name. */
export type MethodCounts = Readonly<Record<string, { dialogues: number; turns: number }>>;

/**
 * The other stages whose summaries a section reads (its own stage's it always gets): their
 * definitions, or, for a set the registry decides (every dialogue stage), a function of it.
 */
export type SectionReads =
  | readonly Summarized<unknown>[]
  | ((registry: StageRegistry<ReportingStage>) => readonly Summarized<unknown>[]);

/** One section of the page: `render` gives the whole `<section>`, or "" for nothing to show. */
export interface ReportSection<S> {
  id: string;
  /** the other stages whose summaries `render` reads (`view.summaryOf`, `view.madeBy`); none by default */
  reads?: SectionReads;
  render(view: StageView<S>): string;
}

/** What a stage shows in the report; every part is optional. */
export interface StageReport<S> {
  /** its steps in the "Records through every stage" chart (it reads its own summary only) */
  flow?(view: StageView<S>): { label: string; records?: number | undefined }[];
  /** what it shows under that chart (filter's funnel; its own summary only) */
  underFlow?(view: StageView<S>): string;
  /** its own sections, in page order */
  sections?: readonly ReportSection<S>[];
}

/** A file of the release, as the release stage's summary lists it. */
export interface ReleaseFile {
  name: string;
  sha256: string;
}

/** Declared by the stage that makes the release (the files `push` uploads). */
export interface StageRelease<S> {
  /** the files of `<data_dir>/<stage>/` that are the release, from the stage's summary */
  files(summary: S): readonly ReleaseFile[];
}

/** The part of a stage definition (pipeline/stage.ts) the report and `push` read. */
export interface ReportingStage<S = unknown> extends RegisteredStage {
  summarySchema?: z.ZodType<S> | undefined;
  report?: StageReport<S> | undefined;
  release?: StageRelease<S> | undefined;
}

/** A stage definition, for reading its summary: its name and the schema of its summary. */
export interface Summarized<S> {
  name: string;
  summarySchema?: z.ZodType<S> | undefined;
}

/** The run as the report sees it, handed to every stage's report parts. */
export interface ReportView {
  /** the stages of the run (the list the CLI hands down) */
  registry: StageRegistry<ReportingStage>;
  /** the dialogue stages switched off in the config */
  disabled: readonly string[];
  /** whether the stage has run (or is running): neither "not run" nor switched off */
  ran(stage: string): boolean;
  /** a stage's record counts */
  counts(stage: string): StageCounts | undefined;
  /**
   * A stage's summary read through its schema; undefined when there is none yet, the stage is
   * switched off, or it does not parse (the report then says so at the top of the section). A part
   * reading a summary its section does not declare in `reads` is an error.
   */
  summaryOf<S>(stage: Summarized<S>): S | undefined;
  /** what a dialogue stage that ran made, per method (the tallies its summary spreads); undefined otherwise */
  madeBy(stage: ReportingStage): MethodCounts | undefined;
  /**
   * The note a section shows in place of what the given stages have not given it (not run yet); ""
   * where each of them has a summary it reads and cannot, which the note at the section's top names.
   */
  missing(id: string, ...stages: string[]): string;
}

/** The view as one stage's own report parts get it: with its name and its own summary. */
export interface StageView<S> extends ReportView {
  name: string;
  summary: S | undefined;
}
