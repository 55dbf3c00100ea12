// Bar charts as inline SVG, drawn here rather than in the browser: the report is one file that any
// browser (or none: the numbers are in the tables too) shows the same, with nothing fetched and
// nothing to execute. Every bar is a `rect.mark` carrying its value, so a test (and the page's own
// self-check) can count what was drawn.

export interface Series {
  name: string;
  /** one value per category; undefined draws nothing (unknown), 0 draws a zero-height bar */
  values: (number | undefined)[];
  color: string;
}

export interface BarChartSpec {
  /** names the chart in the page (`data-chart`) */
  id: string;
  /** what the chart shows, for screen readers and the figure caption */
  title: string;
  categories: string[];
  series: Series[];
  /** stack the series in each category instead of placing them side by side */
  stacked?: boolean;
  /** bars grow to the right, categories down the left (long labels) */
  horizontal?: boolean;
  /** value labels and axis ticks */
  format?: (value: number) => string;
  width?: number;
}

const FONT = 12;

export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A round axis maximum above `max` (1, 2 or 5 times a power of ten), and its tick step. */
export function niceScale(max: number, ticks = 5): { max: number; step: number } {
  if (!(max > 0)) return { max: 1, step: 0.2 };
  const raw = max / ticks;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power;
  return { max: Math.ceil(max / step - 1e-9) * step, step };
}

const defaultFormat = (v: number) => (Number.isInteger(v) ? v.toLocaleString("en-US") : v.toFixed(2));

export function barChart(spec: BarChartSpec): string {
  return spec.horizontal ? horizontal(spec) : vertical(spec);
}

function totals(spec: BarChartSpec): number[] {
  return spec.categories.map((_, i) => {
    const values = spec.series.map((s) => s.values[i] ?? 0);
    return spec.stacked ? values.reduce((a, b) => a + b, 0) : Math.max(0, ...values);
  });
}

function legend(spec: BarChartSpec, x: number, y: number): string {
  if (spec.series.length < 2) return "";
  let at = x;
  return spec.series
    .map((s) => {
      const item =
        `<rect x="${at}" y="${y - 10}" width="10" height="10" fill="${s.color}"/>` +
        `<text x="${at + 14}" y="${y}" font-size="${FONT}">${escapeXml(s.name)}</text>`;
      at += 24 + s.name.length * 7;
      return item;
    })
    .join("");
}

function open(spec: BarChartSpec, width: number, height: number): string {
  return (
    // inline in HTML the parser puts <svg> in the SVG namespace itself: no xmlns, so no URL in the file
    `<svg class="chart-svg" data-chart="${escapeXml(spec.id)}" ` +
    `viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${escapeXml(spec.title)}">` +
    `<title>${escapeXml(spec.title)}</title>`
  );
}

/** A bar: its box, and the series, category and value it stands for (shown on hover). */
function mark(
  box: { x: number; y: number; w: number; h: number },
  s: Series,
  category: string,
  value: number,
  format: (value: number) => string,
): string {
  return (
    `<rect class="mark" x="${box.x.toFixed(1)}" y="${box.y.toFixed(1)}" width="${Math.max(0, box.w).toFixed(1)}" ` +
    `height="${Math.max(0, box.h).toFixed(1)}" fill="${s.color}" data-series="${escapeXml(s.name)}" ` +
    `data-category="${escapeXml(category)}" data-value="${value}"><title>${escapeXml(`${category}, ${s.name}: ${format(value)}`)}</title></rect>`
  );
}

function vertical(spec: BarChartSpec): string {
  const format = spec.format ?? defaultFormat;
  const width = spec.width ?? 640;
  const height = 300;
  const left = 56;
  const right = 12;
  const top = spec.series.length > 1 ? 28 : 14;
  const bottom = 48;
  const plotW = width - left - right;
  const plotH = height - top - bottom;
  const scale = niceScale(Math.max(...totals(spec), 0));
  const y = (v: number) => top + plotH - (v / scale.max) * plotH;
  const parts = [open(spec, width, height), legend(spec, left, 16)];
  for (let t = 0; t <= scale.max + 1e-9; t += scale.step) {
    parts.push(
      `<line x1="${left}" x2="${width - right}" y1="${y(t).toFixed(1)}" y2="${y(t).toFixed(1)}" stroke="#e3e3e3"/>`,
      `<text x="${left - 6}" y="${(y(t) + 4).toFixed(1)}" font-size="${FONT - 1}" text-anchor="end" fill="#555">${escapeXml(format(t))}</text>`,
    );
  }
  const slot = plotW / Math.max(1, spec.categories.length);
  const groups = spec.stacked ? 1 : spec.series.length;
  const barW = Math.min(48, (slot * 0.75) / groups);
  spec.categories.forEach((category, i) => {
    const x0 = left + i * slot + (slot - barW * groups) / 2;
    let base = 0;
    spec.series.forEach((s, k) => {
      const value = s.values[i];
      if (value === undefined) return;
      const x = spec.stacked ? x0 : x0 + k * barW;
      const from = spec.stacked ? base : 0;
      const box = { x, y: y(from + value), w: barW - 1, h: y(from) - y(from + value) };
      parts.push(mark(box, s, category, value, format));
      if (!spec.stacked && spec.categories.length * groups <= 24) {
        parts.push(
          `<text x="${(x + barW / 2).toFixed(1)}" y="${(y(value) - 3).toFixed(1)}" font-size="${FONT - 2}" text-anchor="middle" fill="#333">${escapeXml(format(value))}</text>`,
        );
      }
      base += value;
    });
    parts.push(
      `<text x="${(left + i * slot + slot / 2).toFixed(1)}" y="${height - bottom + 16}" font-size="${FONT - 1}" text-anchor="middle">${escapeXml(category)}</text>`,
    );
  });
  parts.push(`<line x1="${left}" x2="${width - right}" y1="${y(0)}" y2="${y(0)}" stroke="#888"/>`, "</svg>");
  return parts.join("");
}

function horizontal(spec: BarChartSpec): string {
  const format = spec.format ?? defaultFormat;
  const width = spec.width ?? 640;
  const groups = spec.stacked ? 1 : spec.series.length;
  const rowH = Math.max(20, 12 * groups + 8);
  const left = Math.min(240, 16 + 7 * Math.max(...spec.categories.map((c) => c.length), 4));
  const right = 70;
  const top = spec.series.length > 1 ? 28 : 10;
  const height = top + rowH * spec.categories.length + 24;
  const plotW = width - left - right;
  const scale = niceScale(Math.max(...totals(spec), 0));
  const x = (v: number) => left + (v / scale.max) * plotW;
  const parts = [open(spec, width, height), legend(spec, left, 16)];
  for (let t = 0; t <= scale.max + 1e-9; t += scale.step) {
    parts.push(
      `<line x1="${x(t).toFixed(1)}" x2="${x(t).toFixed(1)}" y1="${top}" y2="${height - 22}" stroke="#e3e3e3"/>`,
      `<text x="${x(t).toFixed(1)}" y="${height - 8}" font-size="${FONT - 2}" text-anchor="middle" fill="#555">${escapeXml(format(t))}</text>`,
    );
  }
  const barH = (rowH - 6) / groups;
  spec.categories.forEach((category, i) => {
    const y0 = top + i * rowH + 3;
    let base = 0;
    spec.series.forEach((s, k) => {
      const value = s.values[i];
      if (value === undefined) return;
      const y = spec.stacked ? y0 : y0 + k * barH;
      const from = spec.stacked ? base : 0;
      parts.push(
        mark({ x: x(from), y, w: x(from + value) - x(from), h: barH - 1 }, s, category, value, format),
      );
      if (!spec.stacked) {
        parts.push(
          `<text x="${(x(value) + 4).toFixed(1)}" y="${(y + barH / 2 + 3).toFixed(1)}" font-size="${FONT - 2}" fill="#333">${escapeXml(format(value))}</text>`,
        );
      }
      base += value;
    });
    if (spec.stacked) {
      parts.push(
        `<text x="${(x(base) + 4).toFixed(1)}" y="${(y0 + barH / 2 + 3).toFixed(1)}" font-size="${FONT - 2}" fill="#333">${escapeXml(format(base))}</text>`,
      );
    }
    parts.push(
      `<text x="${left - 6}" y="${(y0 + (rowH - 6) / 2 + 4).toFixed(1)}" font-size="${FONT - 1}" text-anchor="end">${escapeXml(category)}</text>`,
    );
  });
  parts.push(`<line x1="${left}" x2="${left}" y1="${top}" y2="${height - 22}" stroke="#888"/>`, "</svg>");
  return parts.join("");
}
