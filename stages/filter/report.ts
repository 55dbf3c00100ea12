// Filter's part of the run report: its rounds in the flow chart, the paper's filtering figure under it
// (287,252 -> 191,122 -> 156,526), and each round's score histogram with the passing scores apart.
// (The languages of the filtered set are export's section: it reads this stage's summary.)
import type { StageReport, StageView } from "../../pipeline/report/contract.js";
import { figure, MUTED, missing, n, OURS, PAPER, pct, table } from "../../pipeline/report/html.js";
import type { FilterSummary } from "./funnel.js";

/** The filtering figure: the aggregated pool, after the first complexity round, after the second. */
export const PAPER_FILTER = { pool: 287_252, round1: 191_122, kept: 156_526 } as const;

/** The score s such that the records scored s..5 are exactly those that passed. */
export function passingThreshold(histogram: Record<string, number>, passed: number): number | undefined {
  for (let s = 1; s <= 5; s++) {
    let atLeast = 0;
    for (let t = s; t <= 5; t++) atLeast += histogram[String(t)] ?? 0;
    if (atLeast === passed && passed > 0) return s;
  }
  return undefined;
}

function funnelFigure(view: StageView<FilterSummary>): string {
  const f = view.summary;
  if (!f) return view.missing("funnel", view.name);
  if (f.in === 0) return missing("funnel", NO_PAIRS);
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

/** An audit's run reads dialogues only: filter completes on no pairs, and a 0% funnel would mislead. */
const NO_PAIRS = "no instruction pairs reached the complexity filter in this run";

function scoreSection(view: StageView<FilterSummary>): string {
  const head = '<section id="scores"><h2>Complexity scores</h2>';
  const f = view.summary;
  if (!f || f.rounds.length === 0) return `${head}${view.missing("scores", view.name)}</section>`;
  if (f.in === 0) return `${head}${missing("scores", NO_PAIRS)}</section>`;
  const bins = ["1", "2", "3", "4", "5", "unscored"];
  const charts = f.rounds.map((r) => {
    const threshold = passingThreshold(r.histogram, r.passed);
    const passes = (bin: string) => threshold !== undefined && bin !== "unscored" && Number(bin) >= threshold;
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
        (threshold !== undefined ? ` (score ${threshold} or more)` : ""),
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
  sections: [{ id: "scores", render: scoreSection }],
};
