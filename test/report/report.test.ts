// The report rendered by a real browser (headless Chromium): every chart of a full run draws its bars,
// the numbers beside the paper's are the manifests' own, nothing is fetched from anywhere, and a run
// that stopped early gets its missing sections said, not drawn empty.
import { existsSync } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { findChromium, viewInBrowser } from "../../pipeline/report/browser.js";
import { writeReport } from "../../pipeline/report/index.js";
import { tempDir } from "../support/temp-dir.js";
import { FULL_RUN, REGISTRY, writeManifests } from "./fixtures.js";

interface Chart {
  id: string;
  expected: number;
  drawn: number;
  marks: { series: string; category: string; value: number }[];
}

/** The charts of a dumped DOM: the counts the page's self-check wrote, and every bar. */
function chartsOf(dom: string): Map<string, Chart> {
  const charts = new Map<string, Chart>();
  for (const match of dom.matchAll(/<svg\b([^>]*)>([\s\S]*?)<\/svg>/g)) {
    const attrs = match[1]!;
    const attr = (name: string) => attrs.match(new RegExp(`${name}="([^"]*)"`))?.[1];
    if (!/class="chart-svg"/.test(attrs)) continue;
    const marks = [...match[2]!.matchAll(/<rect class="mark"([^>]*)>/g)].map((m) => {
      const a = (name: string) => m[1]!.match(new RegExp(`${name}="([^"]*)"`))?.[1] ?? "";
      return { series: a("data-series"), category: a("data-category"), value: Number(a("data-value")) };
    });
    charts.set(attr("data-chart")!, {
      id: attr("data-chart")!,
      expected: Number(attr("data-expected")),
      drawn: Number(attr("data-drawn")),
      marks,
    });
  }
  return charts;
}

const value = (chart: Chart | undefined, series: string, category: string) =>
  chart?.marks.find((m) => m.series === series && m.category === category)?.value;

let scratch: string;

beforeAll(async () => {
  scratch = tempDir("cf-report-");
  if (!findChromium()) {
    throw new Error(
      "the report test needs Chromium: run scripts/install.sh (Debian's `chromium`) or set $CHROMIUM",
    );
  }
});

describe("report of a full run, in Chromium", () => {
  let dom: string;
  let charts: Map<string, Chart>;
  let file: string;
  const png = () => path.join(scratch, "full.png");

  beforeAll(async () => {
    const dataDir = path.join(scratch, "full");
    await writeManifests(dataDir, FULL_RUN);
    file = (await writeReport(dataDir, { registry: REGISTRY })).file;
    expect(file).toBe(path.join(dataDir, "export", "report.html"));
    dom = (await viewInBrowser(file, { screenshot: png() })).dom;
    charts = chartsOf(dom);
  });

  it("draws every chart: each bar with a value has a size in the browser", () => {
    expect([...charts.keys()].sort()).toEqual(
      [
        "flow",
        "funnel",
        "languages",
        "methods-share",
        "methods-turns",
        "scores-round-1",
        "scores-round-2",
        "usage",
        "validation",
      ].sort(),
    );
    for (const chart of charts.values()) {
      expect(chart.expected, chart.id).toBeGreaterThan(0);
      expect(chart.drawn, chart.id).toBe(chart.expected);
    }
    // the self-check's own source mentions its warning; what counts is the document it left
    const page = dom.replace(/<script>[\s\S]*?<\/script>/g, "");
    expect(page).not.toMatch(/did not draw/);
    expect(page).not.toMatch(/class="missing"/);
  });

  it("sets the filtering funnel and the languages beside the paper's figures", () => {
    const funnel = charts.get("funnel");
    expect(value(funnel, "this run", "round 1 passed")).toBeCloseTo((100 * 1869) / 2790, 6);
    expect(value(funnel, "this run", "round 2 passed")).toBeCloseTo((100 * 1512) / 2790, 6);
    expect(value(funnel, "paper", "round 1 passed")).toBeCloseTo((100 * 191_122) / 287_252, 6);
    expect(value(funnel, "paper", "round 2 passed")).toBeCloseTo((100 * 156_526) / 287_252, 6);
    expect(dom).toContain("287,252");

    const languages = charts.get("languages");
    expect(languages?.marks.map((m) => m.category)).toEqual([
      ...["python", "javascript", "java", "sql", "cpp", "other"].flatMap((l) => [l, l]),
    ]);
    expect(value(languages, "this run", "python")).toBeCloseTo((100 * 1101) / 1512, 6);
    // rust 60 + go 41 + unknown 20 fold into "other"
    expect(value(languages, "this run", "other")).toBeCloseTo((100 * 121) / 1512, 6);
    expect(value(languages, "paper", "python")).toBe(67.07);
    expect(value(languages, "paper", "other")).toBe(14.5);
  });

  it("draws both rounds' score histograms, the passing scores apart", () => {
    const round1 = charts.get("scores-round-1")!;
    expect(round1.marks.map((m) => [m.category, m.series, m.value])).toEqual([
      ["1", "dropped", 120],
      ["2", "dropped", 301],
      ["3", "dropped", 488],
      ["4", "passed", 1143],
      ["5", "passed", 726],
      ["unscored", "dropped", 12],
    ]);
    expect(value(charts.get("scores-round-2"), "passed", "4")).toBe(1010);
  });

  it("gives dialogues and turns per method beside the paper's table, and validation and LLM usage per stage", () => {
    const turns = charts.get("methods-turns");
    expect(value(turns, "this run", "interaction-simulation")).toBeCloseTo(1321 / 444, 6);
    expect(value(turns, "paper", "interaction-simulation")).toBe(3);
    expect(value(turns, "this run", "code-correction")).toBeUndefined();
    expect(value(turns, "paper", "leetcode-follow-up")).toBe(3.8);
    const share = charts.get("methods-share");
    expect(value(share, "this run", "single-turn-packing")).toBeCloseTo((100 * 146) / 590, 6);

    const validation = charts.get("validation");
    expect(value(validation, "passed", "interaction-simulation")).toBe(360);
    expect(value(validation, "failed", "single-turn-packing")).toBe(12);
    expect(dom).toContain("missing-package");

    const usage = charts.get("usage");
    expect(usage?.marks.map((m) => m.category)).toEqual(["filter", "filter", "simulate", "simulate"]);
    expect(value(usage, "completion tokens", "simulate")).toBe(1_900_000);
    expect(dom).toContain("$65.62");
  });

  it("is one self-contained file: nothing to fetch, no URL at all", async () => {
    const html = await readFile(file, "utf8");
    expect(html).not.toMatch(/<link\b|<img\b|<iframe\b|\bsrc=|url\(|@import|\bhref=|https?:|\/\//);
  });

  it("takes a screenshot", async () => {
    const bytes = await readFile(png());
    expect(bytes.subarray(1, 4).toString()).toBe("PNG");
    expect((await stat(png())).size).toBeGreaterThan(20_000);
  });
});

describe("report of a run that stopped after dedup", () => {
  it("draws what ran and says, section by section, what has not", async () => {
    const dataDir = path.join(scratch, "early");
    await writeManifests(dataDir, FULL_RUN.slice(0, 3));
    const { file, data } = await writeReport(dataDir, { registry: REGISTRY });
    const { dom } = await viewInBrowser(file);
    const charts = chartsOf(dom);

    expect([...charts.keys()]).toEqual(["flow"]);
    const flow = charts.get("flow")!;
    expect(flow.drawn).toBe(2);
    expect(flow.drawn).toBe(flow.expected);
    expect(flow.marks.map((m) => [m.category, m.value])).toEqual([
      ["seed pool (normalize)", 2872],
      ["after dedup", 2790],
    ]);
    for (const section of ["funnel", "languages", "scores", "methods", "validation", "usage"]) {
      expect(dom, section).toMatch(new RegExp(`data-missing="${section}"`));
    }
    expect(dom).toMatch(/filter: not run/);
    expect(data.stages.filter((s) => s.state === "not run").map((s) => s.name)).toEqual([
      "filter",
      "pack",
      "simulate",
      "correct",
      "leetcode",
      "audit",
      "validate",
      "export",
    ]);
    expect(existsSync(path.join(dataDir, "export", "report.html"))).toBe(true);
  });
});
