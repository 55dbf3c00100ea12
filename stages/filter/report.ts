// Filter's part of the run report: its rounds in the flow chart, the paper's filtering figure under it
// (287,252 -> 191,122 -> 156,526), the languages of the filtered set beside the paper's, and each
// round's score histogram with the passing scores apart.
import { PAPER_DEVIATION_LIMIT } from "../../pipeline/dialogue.js";
import type { StageReport, StageView } from "../../pipeline/report/contract.js";
import { deviationText, figure, MUTED, n, OURS, PAPER, pct, table } from "../../pipeline/report/html.js";
import { exportStage } from "../export.js";
import type { FilterSummary } from "./funnel.js";
import { compareLanguages } from "./languages.js";

/** The filtering figure: the aggregated pool, after the first complexity round, after the second. */
export const PAPER_FILTER = { pool: 287_252, round1: 191_122, kept: 156_526 } as const;

export interface FunnelRound {
  round: number;
  prompt: string;
  scored: number;
  passed: number;
  /** "1".."5" and "unscored" -> records */
  histogram: Record<string, number>;
  /** the lowest passing score, when the histogram and `passed` agree on one */
  threshold?: number | undefined;
}

/** The funnel as the report draws it, each round with its passing score. */
export function funnelOf(summary: FilterSummary): { in: number; kept: number; rounds: FunnelRound[] } {
  const rounds = summary.rounds.map(
    (r): FunnelRound => ({
      round: r.round,
      prompt: r.prompt,
      scored: r.scored,
      passed: r.passed,
      histogram: r.histogram,
      threshold: passingThreshold(r.histogram, r.passed),
    }),
  );
  return { in: summary.in, kept: summary.kept, rounds };
}

/** The score s such that the records scored s..5 are exactly those that passed. */
function passingThreshold(histogram: Record<string, number>, passed: number): number | undefined {
  for (let s = 1; s <= 5; s++) {
    let atLeast = 0;
    for (let t = s; t <= 5; t++) atLeast += histogram[String(t)] ?? 0;
    if (atLeast === passed && passed > 0) return s;
  }
  return undefined;
}

/** The languages of the filtered set: filter's kept records, else what export released of them. */
export function languagesOf(view: StageView<FilterSummary>) {
  const counts: Record<string, number> = {};
  const filter = view.summary;
  const exported = filter ? undefined : view.summaryOf(exportStage);
  if (filter) {
    for (const [lang, row] of Object.entries(filter.by_lang)) if (row.kept) counts[lang] = row.kept;
  } else if (exported) {
    for (const [lang, count] of Object.entries(exported.filtered_instruction.by_lang))
      if (count) counts[lang] = count;
  }
  return compareLanguages(counts);
}

function funnelFigure(view: StageView<FilterSummary>): string {
  const f = view.summary && funnelOf(view.summary);
  if (!f) return view.missing("funnel", view.name);
  const pool = f.in;
  const ours = [pool, ...f.rounds.map((r) => r.passed)];
  const paper = [PAPER_FILTER.pool, PAPER_FILTER.round1, PAPER_FILTER.kept];
  const labels = ["pool", ...f.rounds.map((r) => `round ${r.round} passed`)];
  const share = (x: number, of: number) => (of === 0 ? 0 : (100 * x) / of);
  return (
    figure(
      {
        id: "funnel",
        title: "Complexity filtering: share of the pool kept, this run and the paper",
        categories: labels,
        series: [
          { name: "this run", values: ours.map((x) => share(x, pool)), color: OURS },
          {
            name: "paper",
            values: labels.map((_, i) =>
              paper[i] === undefined ? undefined : share(paper[i]!, PAPER_FILTER.pool),
            ),
            color: PAPER,
          },
        ],
        format: (v) => `${v.toFixed(0)}%`,
      },
      `The paper's filtering figure: ${n(PAPER_FILTER.pool)} -> ${n(PAPER_FILTER.round1)} -> ${n(PAPER_FILTER.kept)}.`,
    ) +
    table(
      ["step", "this run", "share", "paper", "share"],
      labels.map((label, i) => [
        label,
        ours[i],
        pct(share(ours[i]!, pool)),
        paper[i],
        paper[i] === undefined ? "" : pct(share(paper[i]!, PAPER_FILTER.pool)),
      ]),
    )
  );
}

function languageSection(view: StageView<FilterSummary>): string {
  const l = languagesOf(view);
  const head = '<section id="languages"><h2>Languages of the filtered set</h2>';
  if (!l) return `${head}${view.missing("languages", view.name)}</section>`;
  const others = Object.entries(l.other)
    .sort((a, b) => b[1] - a[1])
    .map(([lang, count]) => `${lang} ${n(count)}`)
    .join(", ");
  return (
    head +
    figure(
      {
        id: "languages",
        title: "Languages of the filtered set, percent of its queries, this run and the paper",
        categories: l.rows.map((r) => r.lang),
        series: [
          { name: "this run", values: l.rows.map((r) => r.percent), color: OURS },
          { name: "paper", values: l.rows.map((r) => r.paper), color: PAPER },
        ],
        format: (v) => `${v.toFixed(v >= 10 ? 0 : 1)}%`,
      },
      `${n(l.total)} filtered queries.${others ? ` Other: ${others}.` : ""}`,
    ) +
    table(
      ["language", "queries", "this run", "paper", "deviation"],
      l.rows.map((r) => [
        r.lang,
        r.count,
        pct(r.percent),
        pct(r.paper),
        deviationText(r.deviation, r.deviates),
      ]),
    ) +
    `<p class="meta">A deviation over ${PAPER_DEVIATION_LIMIT * 100}% of the paper's share is marked.</p>` +
    "</section>"
  );
}

function scoreSection(view: StageView<FilterSummary>): string {
  const head = '<section id="scores"><h2>Complexity scores</h2>';
  const f = view.summary && funnelOf(view.summary);
  if (!f || f.rounds.length === 0) return `${head}${view.missing("scores", view.name)}</section>`;
  const bins = ["1", "2", "3", "4", "5", "unscored"];
  const charts = f.rounds.map((r) => {
    const passes = (bin: string) =>
      r.threshold !== undefined && bin !== "unscored" && Number(bin) >= r.threshold;
    return figure(
      {
        id: `scores-round-${r.round}`,
        title: `Round ${r.round} (${r.prompt}): records per score`,
        categories: bins,
        stacked: true,
        width: 420,
        series: [
          {
            name: "passed",
            values: bins.map((b) => (passes(b) ? (r.histogram[b] ?? 0) : undefined)),
            color: OURS,
          },
          {
            name: "dropped",
            values: bins.map((b) => (passes(b) ? undefined : (r.histogram[b] ?? 0))),
            color: MUTED,
          },
        ],
      },
      `Round ${r.round} (${r.prompt}): ${n(r.scored)} scored, ${n(r.passed)} passed` +
        (r.threshold !== undefined ? ` (score ${r.threshold} or more)` : ""),
    );
  });
  return `${head}<div class="row">${charts.join("")}</div></section>`;
}

export const filterReport: StageReport<FilterSummary> = {
  // each round's survivors, or the records kept where the summary does not tell the rounds
  flow: (view) =>
    view.summary?.rounds.length
      ? view.summary.rounds.map((r) => ({ label: `filter round ${r.round} passed`, records: r.passed }))
      : [{ label: "filter kept", records: view.counts(view.name)?.out }],
  underFlow: funnelFigure,
  sections: [
    // export's released pairs stand in for filter's summary when it has none
    { id: "languages", reads: [exportStage], render: languageSection },
    { id: "scores", render: scoreSection },
  ],
};
