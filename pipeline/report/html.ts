// The pieces every section of the report is made of: the palette, number formats, a table, a chart
// with its caption, and the notes a section shows when its stage has not run.
import { PAPER_DEVIATION_LIMIT, signedPercent } from "../dialogue.js";
import type { StageRow } from "./contract.js";
import { type BarChartSpec, barChart, escapeXml as esc } from "./svg.js";

export const OURS = "#2f6fb0";
export const PAPER = "#e08a2c";
export const MUTED = "#b9c3cf";

export const n = (x: number | undefined) => (x === undefined ? "" : x.toLocaleString("en-US"));
export const pct = (x: number) => `${x.toFixed(x >= 10 ? 1 : 2)}%`;

export function table(header: string[], rows: (string | number | undefined)[][], numericFrom = 1): string {
  const head = header.map((h) => `<th>${esc(h)}</th>`).join("");
  const body = rows
    .map(
      (r) =>
        `<tr>${r
          .map(
            (c, i) =>
              `<td${i >= numericFrom ? ' class="num"' : ""}>${esc(typeof c === "number" ? n(c) : (c ?? ""))}</td>`,
          )
          .join("")}</tr>`,
    )
    .join("");
  return `<table><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
}

export function figure(spec: BarChartSpec, caption: string): string {
  return `<figure class="chart" data-chart="${esc(spec.id)}">${barChart(spec)}<figcaption>${esc(caption)}</figcaption></figure>`;
}

export function missing(id: string, text: string): string {
  return `<p class="missing" data-missing="${esc(id)}">${esc(text)}</p>`;
}

export function notRun(stages: readonly StageRow[], ...names: string[]): string {
  const states = names.map((name) => {
    const s = stages.find((x) => x.name === name);
    return `${name}: ${s?.state ?? "not run"}`;
  });
  return `no data yet (${states.join(", ")}); rerun \`pnpm pipeline report\` once it has run`;
}

/** `-9%`, or `+60% (over 20%)` past the mark. */
export function deviationText(deviation: number, deviates: boolean): string {
  return deviates
    ? `${signedPercent(deviation)} (over ${PAPER_DEVIATION_LIMIT * 100}%)`
    : signedPercent(deviation);
}
