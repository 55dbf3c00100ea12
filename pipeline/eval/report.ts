// What an evaluation leaves behind and shows: results.jsonl (raw, one line per prediction),
// metrics.json, a progress bar while it runs and a summary table at the end.
import { join } from "node:path";
import { writeJson, writeJsonl } from "./jsonl.js";
import type { EvalMetrics, GroupMetrics } from "./metrics.js";
import { OUTCOMES, type PredictionResult } from "./types.js";

export const RESULTS_FILE = "results.jsonl";
export const METRICS_FILE = "metrics.json";

export interface EvalReport {
  metrics: EvalMetrics;
  /** predictions that could not be matched to a question (and were not run) */
  unmatched: Array<{ qid: string; id: string; language?: string }>;
  /** anything else worth keeping beside the metrics (inputs, settings) */
  info?: Record<string, unknown>;
}

export function writeEvalOutputs(
  outDir: string,
  results: readonly PredictionResult[],
  report: EvalReport,
): void {
  writeJsonl(join(outDir, RESULTS_FILE), results);
  writeJson(join(outDir, METRICS_FILE), { ...report.info, ...report.metrics, unmatched: report.unmatched });
}

/** A one-line progress bar on a TTY; elsewhere a line at every tenth of the way. */
export class ProgressBar {
  private done = 0;
  private passed = 0;
  private lastDecile = -1;
  constructor(
    private total: number,
    private readonly out: NodeJS.WriteStream = process.stderr,
    private readonly label = "evaluating",
  ) {}

  /** The number of runs once known (some inputs may turn out to have nothing to run against). */
  start(total: number): void {
    this.total = total;
  }

  tick(result: PredictionResult): void {
    this.done++;
    if (result.outcome === "Passed") this.passed++;
    const text = `${this.label} ${this.done}/${this.total} (${this.passed} passed)`;
    if (this.out.isTTY) {
      const width = 30;
      const filled = this.total === 0 ? width : Math.round((this.done / this.total) * width);
      this.out.write(`\r[${"#".repeat(filled)}${".".repeat(width - filled)}] ${text}`);
      if (this.done === this.total) this.out.write("\n");
      return;
    }
    const decile = this.total === 0 ? 10 : Math.floor((this.done / this.total) * 10);
    if (decile !== this.lastDecile) {
      this.lastDecile = decile;
      this.out.write(`${text}\n`);
    }
  }
}

function percent(value: number | null): string {
  return value === null ? "-" : `${(value * 100).toFixed(1)}%`;
}

function row(name: string, group: GroupMetrics, ks: readonly number[]): string[] {
  return [
    name,
    String(group.questions),
    String(group.predictions),
    ...OUTCOMES.map((o) => String(group.outcomes[o])),
    ...ks.map((k) => percent(group.pass_at_k[`pass@${k}`]?.value ?? null)),
  ];
}

/** Header and rows of the summary: one row per language, then the overall row. */
export function summaryTable(metrics: EvalMetrics): { header: string[]; rows: string[][] } {
  const header = ["language", "questions", "predictions", ...OUTCOMES, ...metrics.ks.map((k) => `pass@${k}`)];
  const rows = Object.entries(metrics.by_language).map(([language, group]) =>
    row(language, group, metrics.ks),
  );
  rows.push(row("overall", metrics.overall, metrics.ks));
  return { header, rows };
}
