// Filter's part of the report, from its summary as the manifest keeps it: each round's passing score
// inferred from its histogram; and export's section on the filtered set's languages beside the paper's
// (other languages folded together), taken from what export released when filter's summary is not there.
import { expect, it } from "vitest";
import { languagesOf } from "../../stages/export/report.js";
import { exportStage } from "../../stages/export.js";
import { passingThreshold } from "../../stages/filter/report.js";
import { filterStage } from "../../stages/filter.js";
import { dataDirPerTest, FULL_RUN, stageView, writeManifests } from "../report/fixtures.js";

const dir = dataDirPerTest("cf-filter-report-");
const filterView = () => stageView(dir.path, filterStage, "scores");
const exportView = () => stageView(dir.path, exportStage, "languages");

it("infers each round's passing score from its histogram, and folds other languages together", async () => {
  await writeManifests(dir.path, FULL_RUN);
  const view = filterView();
  expect(view.summary!.rounds.map((r) => passingThreshold(r.histogram, r.passed))).toEqual([4, 4]);
  const languages = languagesOf(exportView());
  expect(languages?.other).toEqual({ rust: 60, go: 41, unknown: 20 });
  expect(languages?.rows.reduce((a, r) => a + r.percent, 0)).toBeCloseTo(100, 9);
});

it("reads the languages from export's released pairs when filter has left no summary", async () => {
  const exported = FULL_RUN.find((m) => m.stage === "export")!;
  const stats = exported.stats as { filtered_instruction: Record<string, unknown> };
  await writeManifests(dir.path, [
    ...FULL_RUN.filter((m) => m.stage !== "filter" && m.stage !== "export"),
    {
      ...exported,
      stats: {
        ...stats,
        filtered_instruction: { ...stats.filtered_instruction, by_lang: { python: 30, go: 10 } },
      },
    },
  ]);
  const languages = languagesOf(exportView());
  expect(languages?.total).toBe(40);
  expect(languages?.rows.find((r) => r.lang === "python")?.percent).toBe(75);
  expect(languages?.other).toEqual({ go: 10 });
});
