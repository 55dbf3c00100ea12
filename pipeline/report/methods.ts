// The report's section on the dialogue methods: which ran, dialogues and turns per method beside the
// paper's table with each deviation over 20% marked, and whether the run has the released dataset's
// per-method shape.
import { DIALOGUE_METHODS } from "../dialogue.js";
import { DISABLED, type ReportData } from "./collect.js";
import { deviationText, figure, missing, n, notRun, OURS, PAPER, table } from "./html.js";
import { escapeXml as esc } from "./svg.js";

export function methodSection(data: ReportData): string {
  const head = '<section id="methods"><h2>Dialogues and turns per method</h2>';
  const ours = (m: ReportData["methods"][number]) => m.kept ?? m.generated;
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
      m.paper.dialogues,
      m.paper.turnsPerDialogue.toFixed(1),
      shape?.state === "ran" ? deviationText(shape.deviation, shape.deviates) : undefined,
    ];
  });
  const verdict = data.shape
    ? `<p class="${data.shape.reproduces ? "meta" : "deviates"}" data-shape="${data.shape.reproduces ? "reproduces" : "differs"}">This run ${esc(data.shape.verdict)}.</p>`
    : "";
  const stageState = (stage: string) => data.stages.find((x) => x.name === stage)?.state ?? "not run";
  const methodsBy = (pick: (m: ReportData["methods"][number]) => boolean) =>
    data.methods.filter(pick).map((m) => m.method);
  const ranMethods = methodsBy((m) => !data.disabled.includes(m.stage) && stageState(m.stage) !== "not run");
  const disabledMethods = methodsBy((m) => data.disabled.includes(m.stage));
  const pendingMethods = methodsBy(
    (m) => !data.disabled.includes(m.stage) && stageState(m.stage) === "not run",
  );
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
    const makers = [...new Set(data.methods.map((m) => m.stage))].filter((s) =>
      data.stages.some((x) => x.name === s),
    );
    return `${head}${missing("methods", notRun(data.stages, ...makers))}${tableHtml}</section>`;
  }
  const total = shown.reduce((a, m) => a + ours(m)!.dialogues, 0);
  const paperTotal = DIALOGUE_METHODS.reduce(
    (a, m) => a + (data.methods.find((x) => x.method === m)?.paper.dialogues ?? 0),
    0,
  );
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
            values: data.methods.map((m) => (100 * m.paper.dialogues) / paperTotal),
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
          { name: "paper", values: data.methods.map((m) => m.paper.turnsPerDialogue), color: PAPER },
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

/** Dialogues each quality gate tagged, one row per rule, one column per method. */
