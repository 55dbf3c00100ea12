// Validate's part of the run report: the dialogues it kept, as a step of the flow chart; the methods
// section (report-methods.ts); and the validation outcomes: each dialogue's final code per method,
// every code block per language, why blocks could not run, and what each quality gate tagged.
import type { StageReport, StageView } from "../../pipeline/report/contract.js";
import { outputsStep } from "../../pipeline/report/flow.js";
import { figure, missing, n, table } from "../../pipeline/report/html.js";
import { methodSection, methodsReads } from "./report-methods.js";
import type { ValidateSummary } from "./summary.js";

export const OUTCOME_COLORS: Record<string, string> = {
  passed: "#3a9d5d",
  failed: "#d1495b",
  timeout: "#edae49",
  "not-runnable": "#8d99ae",
  "no-code": "#c9ced6",
};

/** Final-code outcome -> dialogues, per method (kept and dropped, every language). */
function outcomesByMethod(summary: ValidateSummary): { method: string; outcomes: Record<string, number> }[] {
  return Object.entries(summary.by_method).map(([method, byLang]) => {
    const outcomes: Record<string, number> = {};
    for (const cell of Object.values(byLang)) {
      for (const [k, v] of Object.entries(cell)) {
        if (k !== "kept" && k !== "dropped") outcomes[k] = (outcomes[k] ?? 0) + v;
      }
    }
    return { method, outcomes };
  });
}

/** Dialogues each quality gate tagged, one row per rule, one column per method. */
function gatesTable(gates: Record<string, Record<string, number>>): string {
  const rules = Object.keys(gates);
  if (rules.length === 0) return "";
  const methods = [...new Set(rules.flatMap((r) => Object.keys(gates[r]!)))].sort();
  return `<h3>Quality gates: dialogues tagged, per method</h3>${table(
    ["rule", ...methods],
    rules.map((r) => [r, ...methods.map((m) => gates[r]![m] ?? 0)]),
  )}`;
}

function validationSection(view: StageView<ValidateSummary>): string {
  const head = '<section id="validation"><h2>Validation outcomes</h2>';
  const summary = view.summary;
  if (!summary) return `${head}${view.missing("validation", view.name)}</section>`;
  const byMethod = outcomesByMethod(summary);
  const outcomes = [
    ...new Set([...Object.keys(OUTCOME_COLORS), ...byMethod.flatMap((m) => Object.keys(m.outcomes))]),
  ].filter((o) => byMethod.some((m) => (m.outcomes[o] ?? 0) > 0));
  const d = summary.dialogues;
  const blocks = Object.entries(summary.blocks_by_language).sort(
    (a, b) => Object.values(b[1]).reduce((x, y) => x + y, 0) - Object.values(a[1]).reduce((x, y) => x + y, 0),
  );
  const blockOutcomes = [...new Set(blocks.flatMap(([, row]) => Object.keys(row)))];
  return (
    head +
    `<p>${n(d.validated)} dialogues validated: ${n(d.kept)} kept, ${n(d.dropped)} dropped${d.malformed ? `, ${n(d.malformed)} malformed` : ""}.</p>` +
    (byMethod.length && outcomes.length
      ? figure(
          {
            id: "validation",
            title: "Outcome of each dialogue's final code, per method",
            categories: byMethod.map((m) => m.method),
            stacked: true,
            horizontal: true,
            series: outcomes.map((o) => ({
              name: o,
              values: byMethod.map((m) => m.outcomes[o] ?? 0),
              color: OUTCOME_COLORS[o] ?? "#6c757d",
            })),
          },
          "Dialogues by the outcome of their final code (kept and dropped).",
        )
      : missing("validation", "validation ran but recorded no dialogue outcomes")) +
    (blocks.length
      ? `<h3>Code blocks per language</h3>${table(
          ["language", ...blockOutcomes],
          blocks.map(([lang, row]) => [
            lang,
            ...blockOutcomes.map((o) => (row as Record<string, number>)[o] ?? 0),
          ]),
        )}`
      : "") +
    (Object.keys(summary.not_runnable_reasons).length
      ? `<h3>Why blocks could not run</h3>${table(
          ["reason", "blocks"],
          Object.entries(summary.not_runnable_reasons).sort((a, b) => b[1] - a[1]),
        )}`
      : "") +
    gatesTable(summary.gates) +
    "</section>"
  );
}

export const validateReport: StageReport<ValidateSummary> = {
  flow: outputsStep("validated, kept"),
  sections: [
    { id: "methods", reads: methodsReads, render: methodSection },
    { id: "validation", render: validationSection },
  ],
};
