// The run report, `<data_dir>/<release stage>/report.html`, rebuilt from the stage manifests by
// `pnpm pipeline report`, and by `pnpm pipeline run` once a run that reaches the release stage has
// ended (so every manifest it reads is final): `writeReport(dataDir, { registry, states?, disabled? })`.
import { mkdir, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { type CollectOptions, collectReport, type ReportData } from "./collect.js";
import { renderReport } from "./render.js";

export { collectReport } from "./collect.js";
export { renderReport } from "./render.js";

export const REPORT_FILE = "report.html";

export interface WriteReportOptions extends CollectOptions {
  /** where to write; default `<dataDir>/<release stage>/report.html` */
  file?: string;
}

/** Writes the report (whole or not at all) and returns its path and what it shows. */
export async function writeReport(
  dataDir: string,
  options: WriteReportOptions,
): Promise<{ file: string; data: ReportData }> {
  // the release stage's directory (the data dir, if no stage makes a release)
  const file = options.file ?? path.join(dataDir, options.registry.releaseStage()?.name ?? "", REPORT_FILE);
  const data = collectReport(dataDir, options);
  await mkdir(path.dirname(file), { recursive: true });
  // named as the release stage names its temporaries, so that stage clears one a kill left behind
  const temp = `${file}.tmp-${process.pid}`;
  await writeFile(temp, renderReport(data));
  await rename(temp, file);
  return { file, data };
}
