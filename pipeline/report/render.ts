// The report page: one self-contained HTML file (styles, charts and script inline; nothing fetched):
// the stages table, the flow chart (flow.ts), every stage's own sections in registry order
// (contract.ts), the LLM usage of all of them, and last the sections of the stage that makes the
// release. Each section is a chart beside the paper's figure and a table with the numbers; one whose
// stage has not run says so instead of drawing an empty chart.
import type { ReportData, StageRow } from "./collect.js";
import { flowSection } from "./flow.js";
import { figure, missing, OURS, PAPER, table } from "./html.js";
import { escapeXml as esc } from "./svg.js";
import { readsOf, withUnreadableNote } from "./view.js";

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

function usageSection(data: ReportData): string {
  const head = '<section id="usage"><h2>LLM requests, tokens and cost per stage</h2>';
  const used = data.stages.filter((s) => s.usage && (s.usage.requests > 0 || s.usage.cachedRequests > 0));
  if (used.length === 0)
    return `${head}${missing("usage", "no stage has recorded LLM requests yet")}</section>`;
  const total = (k: Exclude<keyof NonNullable<StageRow["usage"]>, "endpoints">) =>
    used.reduce((a, s) => a + (s.usage![k] ?? 0), 0);
  const counted = [
    "requests",
    "cachedRequests",
    "failedRequests",
    "promptTokens",
    "completionTokens",
  ] as const;
  const rows = used.map((s) => [
    s.name,
    ...counted.map((k) => s.usage![k]),
    `$${s.usage!.costUsd.toFixed(2)}`,
  ]);
  rows.push(["total", ...counted.map(total), `$${total("costUsd").toFixed(2)}`]);
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

/**
 * The own sections of the stages that make the release (or of every other stage), each with the note
 * of any unreadable summary it reads at its top.
 */
function stageSections(data: ReportData, release: boolean): string {
  const { view } = data;
  return view.registry.stages
    .filter((stage) => Boolean(stage.release) === release)
    .flatMap((stage) =>
      (stage.report?.sections ?? []).map((section) => {
        const html = section.render(view.forStage(stage, section.id));
        return withUnreadableNote(
          section.id,
          html,
          view.unreadable(readsOf(view.registry, stage, section.id)),
        );
      }),
    )
    .join("\n");
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
${stageSections(data, false)}
${usageSection(data)}
${stageSections(data, true)}
</main>
<script>${SELF_CHECK}</script>
</body>
</html>
`;
}
