// The report page: one self-contained HTML file (styles, charts and a few lines of script inline;
// nothing fetched), each section a chart beside the paper's figure and a table with the numbers.
// A section whose stage has not run says so instead of drawing an empty chart.
import { PAPER_DEVIATION_LIMIT } from "../dialogue.js";
import type { ReportData, StageRow } from "./collect.js";
import {
  deviationText,
  figure,
  MUTED,
  missing,
  n,
  notRun,
  OURS,
  OUTCOME_COLORS,
  PAPER,
  pct,
  table,
} from "./html.js";
import { methodSection } from "./methods.js";
import { PAPER_FILTER } from "./paper.js";
import { escapeXml as esc } from "./svg.js";

function formatMs(ms: number | undefined): string {
  if (ms === undefined) return "";
  const s = Math.round(ms / 1000);
  return s < 60
    ? `${s}s`
    : s < 3600
      ? `${Math.floor(s / 60)}m ${s % 60}s`
      : `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

function stagesSection(data: ReportData): string {
  const rows = data.stages.map((s) => [
    s.name,
    s.reason ? `${s.state} (${s.reason})` : s.state,
    s.counts?.in,
    s.counts?.out,
    s.counts?.rejected,
    s.counts?.failed,
    formatMs(s.elapsedMs),
  ]);
  return `<section id="stages"><h2>Stages</h2>${table(["stage", "state", "in", "out", "rejected", "failed", "elapsed"], rows, 2)}</section>`;
}

function flowSection(data: ReportData): string {
  const parts = ['<section id="flow"><h2>Records through every stage</h2>'];
  if (data.flow.every((s) => s.records === undefined)) {
    parts.push(missing("flow", notRun(data.stages, "normalize")));
  } else {
    parts.push(
      figure(
        {
          id: "flow",
          title: "Records after each step of this run",
          horizontal: true,
          categories: data.flow.map((s) => (s.records === undefined ? `${s.label} (not run)` : s.label)),
          series: [{ name: "this run", values: data.flow.map((s) => s.records), color: OURS }],
        },
        "Records (dialogues, from packing on) after each step of this run.",
      ),
    );
  }
  const f = data.funnel;
  if (!f) {
    parts.push(missing("funnel", notRun(data.stages, "filter")));
  } else {
    const pool = f.in;
    const ours = [pool, ...f.rounds.map((r) => r.passed)];
    const paper = [PAPER_FILTER.pool, PAPER_FILTER.round1, PAPER_FILTER.kept];
    const labels = ["pool", ...f.rounds.map((r) => `round ${r.round} passed`)];
    const share = (x: number, of: number) => (of === 0 ? 0 : (100 * x) / of);
    parts.push(
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
      ),
      table(
        ["step", "this run", "share", "paper", "share"],
        labels.map((label, i) => [
          label,
          ours[i],
          pct(share(ours[i]!, pool)),
          paper[i],
          paper[i] === undefined ? "" : pct(share(paper[i]!, PAPER_FILTER.pool)),
        ]),
      ),
    );
  }
  parts.push("</section>");
  return parts.join("");
}

function languageSection(data: ReportData): string {
  const l = data.languages;
  const head = '<section id="languages"><h2>Languages of the filtered set</h2>';
  if (!l) return `${head}${missing("languages", notRun(data.stages, "filter"))}</section>`;
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

function scoreSection(data: ReportData): string {
  const head = '<section id="scores"><h2>Complexity scores</h2>';
  const f = data.funnel;
  if (!f || f.rounds.length === 0)
    return `${head}${missing("scores", notRun(data.stages, "filter"))}</section>`;
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

function gatesTable(gates: Record<string, Record<string, number>>): string {
  const rules = Object.keys(gates);
  if (rules.length === 0) return "";
  const methods = [...new Set(rules.flatMap((r) => Object.keys(gates[r]!)))].sort();
  return `<h3>Quality gates: dialogues tagged, per method</h3>${table(
    ["rule", ...methods],
    rules.map((r) => [r, ...methods.map((m) => gates[r]![m] ?? 0)]),
  )}`;
}

function validationSection(data: ReportData): string {
  const head = '<section id="validation"><h2>Validation outcomes</h2>';
  const v = data.validation;
  if (!v) return `${head}${missing("validation", notRun(data.stages, "validate"))}</section>`;
  const outcomes = [
    ...new Set([...Object.keys(OUTCOME_COLORS), ...v.byMethod.flatMap((m) => Object.keys(m.outcomes))]),
  ].filter((o) => v.byMethod.some((m) => (m.outcomes[o] ?? 0) > 0));
  const d = v.dialogues;
  const blocks = Object.entries(v.blocksByLanguage).sort(
    (a, b) => Object.values(b[1]).reduce((x, y) => x + y, 0) - Object.values(a[1]).reduce((x, y) => x + y, 0),
  );
  const blockOutcomes = [...new Set(blocks.flatMap(([, row]) => Object.keys(row)))];
  return (
    head +
    `<p>${n(d.validated)} dialogues validated: ${n(d.kept)} kept, ${n(d.dropped)} dropped${d.malformed ? `, ${n(d.malformed)} malformed` : ""}.</p>` +
    (v.byMethod.length && outcomes.length
      ? figure(
          {
            id: "validation",
            title: "Outcome of each dialogue's final code, per method",
            categories: v.byMethod.map((m) => m.method),
            stacked: true,
            horizontal: true,
            series: outcomes.map((o) => ({
              name: o,
              values: v.byMethod.map((m) => m.outcomes[o] ?? 0),
              color: OUTCOME_COLORS[o] ?? "#6c757d",
            })),
          },
          "Dialogues by the outcome of their final code (kept and dropped).",
        )
      : missing("validation", "validation ran but recorded no dialogue outcomes")) +
    (blocks.length
      ? `<h3>Code blocks per language</h3>${table(
          ["language", ...blockOutcomes],
          blocks.map(([lang, row]) => [lang, ...blockOutcomes.map((o) => row[o] ?? 0)]),
        )}`
      : "") +
    (Object.keys(v.notRunnable).length
      ? `<h3>Why blocks could not run</h3>${table(
          ["reason", "blocks"],
          Object.entries(v.notRunnable).sort((a, b) => b[1] - a[1]),
        )}`
      : "") +
    gatesTable(v.gates) +
    "</section>"
  );
}

function usageSection(data: ReportData): string {
  const head = '<section id="usage"><h2>LLM requests, tokens and cost per stage</h2>';
  const used = data.stages.filter((s) => s.usage && (s.usage.requests > 0 || s.usage.cachedRequests > 0));
  if (used.length === 0)
    return `${head}${missing("usage", "no stage has recorded LLM requests yet")}</section>`;
  const total = (k: Exclude<keyof NonNullable<StageRow["usage"]>, "endpoints">) =>
    used.reduce((a, s) => a + (s.usage![k] ?? 0), 0);
  const rows = used.map((s) => {
    const u = s.usage!;
    return [
      s.name,
      u.requests,
      u.cachedRequests,
      u.failedRequests,
      u.promptTokens,
      u.completionTokens,
      `$${u.costUsd.toFixed(2)}`,
    ];
  });
  rows.push([
    "total",
    total("requests"),
    total("cachedRequests"),
    total("failedRequests"),
    total("promptTokens"),
    total("completionTokens"),
    `$${total("costUsd").toFixed(2)}`,
  ]);
  return (
    head +
    figure(
      {
        id: "usage",
        title: "Tokens per stage",
        categories: used.map((s) => s.name),
        stacked: true,
        horizontal: true,
        series: [
          { name: "prompt tokens", values: used.map((s) => s.usage!.promptTokens), color: OURS },
          { name: "completion tokens", values: used.map((s) => s.usage!.completionTokens), color: PAPER },
        ],
      },
      "Prompt and completion tokens of the requests each stage sent (answers from the response cache are not sent again).",
    ) +
    table(
      ["stage", "requests", "cached", "failed", "prompt tokens", "completion tokens", "cost (USD)"],
      rows,
    ) +
    "</section>"
  );
}

function exportSection(data: ReportData): string {
  if (data.exportFiles.length === 0) return "";
  return `<section id="export"><h2>Exported files</h2>${table(
    ["file", "rows", "bytes"],
    data.exportFiles.map((f) => [f.name, f.rows, f.bytes]),
  )}</section>`;
}

// Counts, in the browser, the bars that really have a size; a chart that drew fewer than it should
// gets a visible warning (and the counts, for the report's own test). Then notes the laid-out page's
// size, which a screenshot is taken at.
const SELF_CHECK = `
for (const svg of document.querySelectorAll("svg.chart-svg")) {
  let expected = 0, drawn = 0;
  for (const mark of svg.querySelectorAll("rect.mark")) {
    if (Number(mark.getAttribute("data-value")) > 0) {
      expected++;
      const box = mark.getBBox();
      if (box.width > 0 && box.height > 0) drawn++;
    }
  }
  svg.setAttribute("data-expected", String(expected));
  svg.setAttribute("data-drawn", String(drawn));
  if (drawn < expected || expected === 0) {
    const note = document.createElement("p");
    note.className = "missing";
    note.textContent = "this chart did not draw (" + drawn + " of " + expected + " bars)";
    svg.after(note);
  }
}
const page = document.body.getBoundingClientRect();
document.body.setAttribute("data-page-width", String(Math.ceil(Math.max(page.width, document.documentElement.scrollWidth))));
document.body.setAttribute("data-page-height", String(Math.ceil(page.height)));`;

const STYLE = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1d232b;margin:0;background:#f6f7f9}
main{max-width:1120px;margin:0 auto;padding:24px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:0 0 12px}h3{font-size:14px;margin:16px 0 6px}
section{background:#fff;border:1px solid #e1e4e8;border-radius:6px;padding:16px 20px;margin:16px 0}
.meta{color:#59636e;margin:0}
table{border-collapse:collapse;margin:8px 0;font-size:13px}
th,td{border-bottom:1px solid #eaecef;padding:3px 10px;text-align:left}td.num{text-align:right;font-variant-numeric:tabular-nums}
figure{margin:8px 0}figcaption{color:#59636e;font-size:12px}
.row{display:flex;flex-wrap:wrap;gap:16px}
.deviates{color:#8a1f2c;font-weight:600}
.missing{color:#8a5a00;background:#fff8e6;border:1px solid #f3d58a;border-radius:4px;padding:6px 10px}
svg text{font-family:system-ui,sans-serif}`;

export function renderReport(data: ReportData): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>codefeedback run report</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<h1>codefeedback run report</h1>
<p class="meta">Data directory ${esc(data.dataDir)}; built ${esc(data.generatedAt)} from the stage manifests. Paper: OpenCodeInterpreter (arXiv 2402.14658).</p>
${stagesSection(data)}
${flowSection(data)}
${languageSection(data)}
${scoreSection(data)}
${methodSection(data)}
${validationSection(data)}
${usageSection(data)}
${exportSection(data)}
</main>
<script>${SELF_CHECK}</script>
</body>
</html>
`;
}
