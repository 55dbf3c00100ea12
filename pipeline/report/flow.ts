// The report's "Records through every stage" section: one bar per step the stages declare (their
// `report.flow`, in registry order), then what each stage shows under it (`report.underFlow`).
import type { ReportData } from "./collect.js";
import type { StageView } from "./contract.js";
import { figure, OURS } from "./html.js";
import { withUnreadableNote } from "./view.js";

/** A stage's one step in the flow chart: its output records, under `label`. */
export function outputsStep(label: string) {
  return (view: StageView<unknown>) => [{ label, records: view.counts(view.name)?.out }];
}

export function flowSection(data: ReportData): string {
  const { view } = data;
  const parts = ['<section id="flow"><h2>Records through every stage</h2>'];
  if (data.flow.every((s) => s.records === undefined)) {
    parts.push(view.missing("flow", ...data.flow.slice(0, 1).map((s) => s.stage)));
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
  const drawing = view.registry.stages.filter((stage) => stage.report?.flow || stage.report?.underFlow);
  for (const stage of drawing) {
    const under = stage.report?.underFlow?.(view.forStage(stage));
    if (under) parts.push(under);
  }
  parts.push("</section>");
  // each stage's part of the chart reads its own summary
  return withUnreadableNote("flow", parts.join(""), view.unreadable(drawing));
}
