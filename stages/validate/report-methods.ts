// Validate's section on the dialogue methods the stages declare, where their dialogues meet: which
// ran, dialogues and turns per method as their stages made them (the tallies each dialogue stage's summary spreads)
// and as validation kept them (else as export released them), beside the paper's table with each
// deviation over 20% marked, and whether the run has the released dataset's per-method shape.
import { paperShape } from "../../pipeline/dialogue.js";
import type { StageRegistry } from "../../pipeline/registry.js";
import type { ReportingStage, StageView } from "../../pipeline/report/contract.js";
import { deviationText, figure, n, OURS, PAPER, table } from "../../pipeline/report/html.js";
import { escapeXml as esc } from "../../pipeline/report/svg.js";
import { DISABLED } from "../../pipeline/report/view.js";
import { exportStage } from "../export.js";
import type { ValidateSummary } from "./summary.js";

/** What the methods section reads besides validate's summary: every dialogue stage's, and export's. */
export const methodsReads = (registry: StageRegistry<ReportingStage>) => [
  ...registry.dialogueStages.map((name) => registry.stage(name)!),
  exportStage,
];

/**
 * Every method's row: its stage, its dialogues and turns as made (undefined: the stage has not run) and
 * as kept by validation (else as export released them), and the run's shape beside the paper's.
 */
export function methodsOf(view: StageView<ValidateSummary>) {
  const { registry } = view;
  const keptSource = view.summary?.kept ?? view.summaryOf(exportStage)?.code_feedback.by_method;
  const methods = registry.dialogueStages.flatMap((stage) => {
    // a stage that ran and made none of a method's dialogues made 0 of them: it is not "not run"
    const made = view.ran(stage) ? (view.madeBy(registry.stage(stage)!) ?? {}) : undefined;
    return registry.methodsOf(stage).map((method) => {
      const t = made && (made[method.name] ?? { dialogues: 0, turns: 0 });
      const kept = keptSource?.[method.name];
      return {
        method: method.name,
        stage,
        generated: t && { dialogues: t.dialogues, turns: t.turns },
        kept: kept
          ? { dialogues: kept.dialogues, turns: kept.turns }
          : keptSource && t && { dialogues: 0, turns: 0 },
        paper: method.paper,
      };
    });
  });
  const shown = Object.fromEntries(methods.map((m) => [m.method, m.kept ?? m.generated]));
  return {
    methods,
    shape: methods.some((m) => m.generated || m.kept)
      ? paperShape(shown, registry.methods, registry.methodsOfStages(view.disabled))
      : undefined,
  };
}

export function methodSection(view: StageView<ValidateSummary>): string {
  const head = '<section id="methods"><h2>Dialogues and turns per method</h2>';
  const data = { ...methodsOf(view), disabled: view.disabled };
  const ours = (m: (typeof data.methods)[number]) => m.kept ?? m.generated;
  // a method with no dialogue (yet) has no bar to draw
  const shown = data.methods.filter((m) => (ours(m)?.dialogues ?? 0) > 0);
  const rows = data.methods.map((m) => {
    const tpd = (t?: { dialogues: number; turns: number }) =>
      t?.dialogues ? (t.turns / t.dialogues).toFixed(2) : "";
    const shape = data.shape?.methods.find((x) => x.method === m.method);
    const disabled = data.disabled.includes(m.stage);
    return [
      m.method,
      disabled ? DISABLED : (m.generated?.dialogues ?? `${m.stage} not run`),
      disabled ? undefined : m.kept?.dialogues,
      disabled ? undefined : tpd(ours(m)),
      m.paper?.dialogues,
      m.paper?.turnsPerDialogue.toFixed(1),
      shape?.state === "ran" && m.paper ? deviationText(shape.deviation, shape.deviates) : undefined,
    ];
  });
  const verdict = data.shape
    ? `<p class="${data.shape.reproduces ? "meta" : "deviates"}" data-shape="${data.shape.reproduces ? "reproduces" : "differs"}">This run ${esc(data.shape.verdict)}.</p>`
    : "";
  const methodsBy = (pick: (stage: string) => boolean) =>
    data.methods.filter((m) => pick(m.stage)).map((m) => m.method);
  const ranMethods = methodsBy(view.ran);
  const disabledMethods = methodsBy((stage) => data.disabled.includes(stage));
  const pendingMethods = methodsBy((stage) => !view.ran(stage) && !data.disabled.includes(stage));
  const ranLine = `<p class="meta" data-methods-run="${esc(ranMethods.join(" "))}">Dialogue methods run: ${esc(
    [
      ranMethods.join(", ") || "none",
      disabledMethods.length ? `not run (disabled): ${disabledMethods.join(", ")}` : "",
      pendingMethods.length ? `not run yet: ${pendingMethods.join(", ")}` : "",
    ]
      .filter(Boolean)
      .join("; "),
  )}.</p>`;
  const tableHtml =
    ranLine +
    verdict +
    table(
      [
        "method",
        "made",
        "kept after validation",
        "turns per dialogue",
        "paper: dialogues",
        "paper: turns per dialogue",
        "deviation",
      ],
      rows,
    );
  if (shown.length === 0) {
    return `${head}${view.missing("methods", ...view.registry.dialogueStages)}${tableHtml}</section>`;
  }
  const total = shown.reduce((a, m) => a + ours(m)!.dialogues, 0);
  const paperTotal = data.methods.reduce((a, m) => a + (m.paper?.dialogues ?? 0), 0);
  const categories = data.methods.map((m) => m.method);
  return (
    head +
    '<div class="row">' +
    figure(
      {
        id: "methods-share",
        title: "Share of dialogues per method, this run and the paper",
        categories,
        series: [
          {
            name: "this run",
            values: data.methods.map((m) =>
              ours(m) ? (100 * ours(m)!.dialogues) / Math.max(1, total) : undefined,
            ),
            color: OURS,
          },
          {
            name: "paper",
            values: data.methods.map((m) => m.paper && (100 * m.paper.dialogues) / paperTotal),
            color: PAPER,
          },
        ],
        horizontal: true,
        width: 520,
        format: (v) => `${v.toFixed(v >= 10 ? 0 : 1)}%`,
      },
      `Percent of all dialogues (this run: ${n(total)}; paper: ${n(paperTotal)}).`,
    ) +
    figure(
      {
        id: "methods-turns",
        title: "Turns per dialogue per method, this run and the paper",
        categories,
        series: [
          {
            name: "this run",
            values: data.methods.map((m) => {
              const t = ours(m);
              return t?.dialogues ? t.turns / t.dialogues : undefined;
            }),
            color: OURS,
          },
          { name: "paper", values: data.methods.map((m) => m.paper?.turnsPerDialogue), color: PAPER },
        ],
        horizontal: true,
        width: 520,
        format: (v) => v.toFixed(1),
      },
      "A turn is a user message and its answer.",
    ) +
    "</div>" +
    tableHtml +
    "</section>"
  );
}
