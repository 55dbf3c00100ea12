// The run report: `<data_dir>/export/report.html`, rebuilt from the stage manifests by
// `pnpm pipeline report`, and by `pnpm pipeline run` once a run that reaches export has ended (so
// every manifest it reads is final, export's own included).
//
//   const registry = new StageRegistry(STAGES);                      // the stages, as the CLI hands them down
//   await writeReport(dataDir, { registry })                         // from whatever has run
//   await writeReport(dataDir, { registry, states })                 // with the runner's view (stale, running)
//   await writeReport(dataDir, { registry, disabled: ["leetcode"] }) // stages switched off: "not run (disabled)"
import { mkdir, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { type CollectOptions, collectReport, type ReportData } from "./collect.js";
import { renderReport } from "./render.js";

export type { CollectOptions, ReportData } from "./collect.js";
export { collectReport } from "./collect.js";
export { PAPER_FILTER, PAPER_LANGUAGES } from "./paper.js";
export { renderReport } from "./render.js";

export const REPORT_FILE = "report.html";

export interface WriteReportOptions extends CollectOptions {
  /** where to write; default `<dataDir>/export/report.html` */
  file?: string;
}

/** Writes the report (whole or not at all) and returns its path and what it shows. */
export async function writeReport(
  dataDir: string,
  options: WriteReportOptions,
): Promise<{ file: string; data: ReportData }> {
  const file = options.file ?? path.join(dataDir, "export", REPORT_FILE);
  const data = collectReport(dataDir, options);
  await mkdir(path.dirname(file), { recursive: true });
  // named as export names its temporaries, so the export stage clears one a kill left behind
  const temp = `${file}.tmp-${process.pid}`;
  await writeFile(temp, renderReport(data));
  await rename(temp, file);
  return { file, data };
}
