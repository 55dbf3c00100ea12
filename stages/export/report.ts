// Export's part of the run report: the dialogues it released, as the last step of the flow chart, and
// the files it wrote (the page's last section: the release).
import { PAPER_DEVIATION_LIMIT } from "../../pipeline/dialogue.js";
import type { StageReport, StageView } from "../../pipeline/report/contract.js";
import { deviationText, figure, n, OURS, PAPER, pct, table } from "../../pipeline/report/html.js";
import { filterSummarySchema } from "../filter/funnel.js";
import { compareLanguages } from "./languages.js";
import { reviewSection } from "./review.js";
import { type AuditVerdict, auditsOnly, type ExportSummary } from "./stats.js";

/** The languages of the filtered set come from filter's summary, else from the pairs export released. */
const FILTER = { name: "filter", summarySchema: filterSummarySchema };

export function languagesOf(view: StageView<ExportSummary>) {
  const counts: Record<string, number> = {};
  const filter = view.summaryOf(FILTER);
  const exported = filter ? undefined : view.summary;
  if (filter) {
    for (const [lang, row] of Object.entries(filter.by_lang)) if (row.kept) counts[lang] = row.kept;
  } else if (exported) {
    for (const [lang, count] of Object.entries(exported.filtered_instruction.by_lang))
      if (count) counts[lang] = count;
  }
  return compareLanguages(counts);
}

function languageSection(view: StageView<ExportSummary>): string {
  // an audit that read no instruction pairs has no filtered set to show
  const summary = view.summary;
  if (summary && auditsOnly(summary) && summary.filtered_instruction.rows === 0) return "";
  const l = languagesOf(view);
  const head = '<section id="languages"><h2>Languages of the filtered set</h2>';
  if (!l) return `${head}${view.missing("languages", FILTER.name)}</section>`;
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

/** Each audited dataset: its pass rate and reasons for dropping, then its languages (none audited: nothing). */
function auditSection(audits: readonly AuditVerdict[]): string {
  if (audits.length === 0) return "";
  const reasons = (a: AuditVerdict) =>
    Object.entries(a.dropped_by)
      .map(([reason, count]) => `${reason} ${n(count)}`)
      .join(", ");
  return `<section id="audits"><h2>Audited datasets</h2>${table(
    ["dataset", "source", "dialogues read", "released", "pass rate", "dropped by reason"],
    audits.map((a) => [a.method, a.where, a.read, a.released, pct(a.pass_rate * 100), reasons(a)]),
    2,
  )}${table(
    ["dataset", "language", "released", "dropped"],
    audits.flatMap((a) =>
      Object.entries(a.by_lang).map(([lang, c]) => [a.method, lang, c.released, c.dropped]),
    ),
    2,
  )}</section>`;
}

export const exportReport: StageReport<ExportSummary> = {
  flow: (view) => [{ label: "exported dialogues", records: view.summary?.code_feedback.dialogues }],
  sections: [
    { id: "languages", reads: [FILTER], render: languageSection },
    { id: "review", render: (view) => reviewSection(view.summary?.review) },
    { id: "audits", render: (view) => auditSection(view.summary?.audits ?? []) },
    {
      id: "export",
      render: (view) => {
        const files = view.summary?.files ?? [];
        if (files.length === 0) return "";
        return `<section id="export"><h2>Exported files</h2>${table(
          ["file", "rows", "bytes"],
          files.map((f) => [f.name, f.rows, f.bytes]),
        )}</section>`;
      },
    },
  ],
};
