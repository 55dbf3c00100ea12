// What the report reads from the manifests: the runner's judgement over a manifest's own state, the
// stages' own parts in registry order, and
// a summary whose shape its stage's schema does not read: said in the section, never left empty.
import { expect, it } from "vitest";
import { z } from "zod";
import { StageRegistry } from "../../pipeline/registry.js";
import type { ReportingStage } from "../../pipeline/report/contract.js";
import { collectReport, renderReport } from "../../pipeline/report/index.js";
import { dataDirPerTest, FULL_RUN, REGISTRY, writeManifests } from "./fixtures.js";

const dir = dataDirPerTest("cf-collect-");

it("takes the runner's view of a stage over its manifest", async () => {
  await writeManifests(dir.path, FULL_RUN);
  const data = collectReport(dir.path, {
    registry: REGISTRY,
    states: { filter: { state: "stale", reason: "its configuration changed" } },
  });
  const state = (name: string) => data.stages.find((s) => s.name === name);
  expect(state("filter")).toMatchObject({ state: "stale", reason: "its configuration changed" });
  const exported = FULL_RUN.find((m) => m.stage === "export")!;
  expect(state("export")).toMatchObject({ state: "complete", counts: exported.counts });
  expect(data.flow.at(-1)).toEqual({ label: "exported dialogues", stage: "export", records: 590 });
  const html = renderReport(data);
  expect(html).toContain("<td>code-feedback.parquet</td>");
  expect(html).not.toMatch(/class="missing"/);
});

it("says, in the section that reads it, that a summary of another shape is unreadable, and why", async () => {
  const odd = FULL_RUN.map((m) =>
    m.stage === "filter" ? { ...m, stats: { ...m.stats, rounds: "two" } } : m,
  );
  await writeManifests(dir.path, odd);
  const html = renderReport(collectReport(dir.path, { registry: REGISTRY }));
  const sections = new Map(
    [...html.matchAll(/<section id="([^"]+)">[\s\S]*?<\/section>/g)].map((m) => [m[1]!, m[0]] as const),
  );
  // filter's own sections and its part of the flow chart: the note with the reason, no chart
  for (const id of ["flow", "languages", "scores"]) {
    expect(sections.get(id), id).toContain("summary unreadable (filter: rounds: ");
    expect(sections.get(id), id).toContain("expected array, received string");
    expect(sections.get(id), id).toContain("`pnpm pipeline run filter --force`");
  }
  expect(sections.get("languages")).not.toMatch(/data-chart="languages"/);
  expect(sections.get("scores")).not.toMatch(/data-chart="scores-round/);
  // the flow chart falls back to filter's own count
  expect(sections.get("flow")).toContain('data-category="filter kept"');
  // the stages that read well are drawn as before
  expect(sections.get("validation")).toMatch(/data-chart="validation"/);
  expect(sections.get("methods")).not.toContain("unreadable");
});

it("notes at the top of a section the unreadable summaries it declares it reads, and only those", async () => {
  // a stage whose section reads the other's summary and draws nothing when it gets none
  const source: ReportingStage<{ made: number }> = {
    name: "source",
    summarySchema: z.object({ made: z.number() }),
  };
  const reader = (reads: ReportingStage[]): ReportingStage => ({
    name: "reader",
    report: {
      sections: [
        {
          id: "reader",
          reads,
          render: (view) =>
            `<section id="reader"><h2>Made</h2>${view.summaryOf(source)?.made ?? ""}</section>`,
        },
      ],
    },
  });
  const registry = new StageRegistry<ReportingStage>([source, reader([source])]);
  await writeManifests(dir.path, [
    { ...FULL_RUN[0]!, stage: "source", stats: { made: "many" } },
    { ...FULL_RUN[0]!, stage: "reader" },
  ]);
  expect(renderReport(collectReport(dir.path, { registry }))).toContain(
    '<section id="reader"><h2>Made</h2><p class="missing" data-missing="summary-reader">summary unreadable (source: made: ',
  );
  // a stage switched off has no summary to read, whatever an earlier run left
  expect(renderReport(collectReport(dir.path, { registry, disabled: ["source"] }))).toContain(
    '<section id="reader"><h2>Made</h2></section>',
  );
  // a section that reads a summary it does not declare is the report's error, never a missing note
  const undeclared = new StageRegistry<ReportingStage>([source, reader([])]);
  expect(() => renderReport(collectReport(dir.path, { registry: undeclared }))).toThrow(
    "reader's report section reader reads source's summary without declaring it in its `reads`",
  );

  await writeManifests(dir.path, [{ ...FULL_RUN[0]!, stage: "source", stats: { made: 7 } }]);
  expect(renderReport(collectReport(dir.path, { registry }))).toContain(
    '<section id="reader"><h2>Made</h2>7</section>',
  );
});

it("puts the stages' sections in registry order, the usage next, and the release's sections last", async () => {
  const section = (id: string) => ({ id, render: () => `<section id="${id}"></section>` });
  const registry = new StageRegistry<ReportingStage>([
    { name: "first", report: { sections: [section("a"), section("b")] } },
    { name: "made", release: { files: () => [] }, report: { sections: [section("files")] } },
    { name: "last", report: { flow: () => [{ label: "last out", records: 3 }], sections: [section("c")] } },
  ]);
  await writeManifests(dir.path, [{ ...FULL_RUN[0]!, stage: "last" }]);
  const data = collectReport(dir.path, { registry });
  expect(data.flow).toEqual([{ label: "last out", stage: "last", records: 3 }]);
  const ids = [...renderReport(data).matchAll(/<section id="([^"]+)"/g)].map((m) => m[1]);
  expect(ids).toEqual(["stages", "flow", "a", "b", "c", "usage", "files"]);
});
