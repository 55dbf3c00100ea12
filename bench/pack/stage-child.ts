// One run of the real pack stage over the prepared data dir, in a process of its own so that its
// peak RSS is the stage's: prints one JSON line with the peak RSS, the time and the stage's summary.
import { loadConfig } from "../../pipeline/config/load.js";
import { silentLogger } from "../../pipeline/log.js";
import { Runner } from "../../pipeline/runner.js";
import type { Services } from "../../pipeline/services.js";
import type { Stage } from "../../pipeline/stage.js";
import { packStage } from "../../stages/pack.js";
import { syntheticFilterStage } from "./synthetic.js";

const [configFile] = process.argv.slice(2);
const services: Services = {
  llm: () => {
    throw new Error("pack needs no LLM");
  },
  sandbox: () => {
    throw new Error("pack needs no sandbox");
  },
  close: async () => {},
};
const runner = new Runner(
  [syntheticFilterStage, packStage] as Stage<unknown>[],
  loadConfig({ file: configFile!, sets: [] }),
  {
    services,
    log: silentLogger,
    progressStream: { write: () => true, isTTY: false } as unknown as NodeJS.WriteStream,
  },
);
const started = performance.now();
const reports = await runner.run([process.argv[3] ?? "pack"]);
const seconds = (performance.now() - started) / 1000;
const report = reports.find((r) => r.stage === (process.argv[3] ?? "pack"));
process.stdout.write(
  `${JSON.stringify({ seconds, peakRssMiB: process.resourceUsage().maxRSS / 1024, action: report?.action, counts: report?.counts, stats: report?.stats })}\n`,
);
