// `pnpm pipeline report`: rebuilds <data_dir>/<release stage>/report.html (export's directory) from
// whatever stages have run; and the same report at the end of a `run` that reaches the release stage,
// built once every manifest is final.
import type { CommandModule } from "yargs";
import { createLogger } from "../log.js";
import { StageRegistry } from "../registry.js";
import { viewInBrowser } from "../report/browser.js";
import { DISABLED } from "../report/collect.js";
import type { ReportingStage } from "../report/contract.js";
import { REPORT_FILE, writeReport } from "../report/index.js";
import { Runner, type RunOptions, type StageOutcome } from "../runner.js";
import { createServices, type ServiceOptions } from "../services.js";
import type { Stage } from "../stage.js";
import type { Manifest } from "../store/manifest.js";
import { type DataOptions, loadFromArgs, withDataOptions } from "./common.js";

type ReportArgs = DataOptions & { out?: string; screenshot?: string };

type Judged = Record<string, { state: string; reason?: string | undefined }>;
type RunnerView = Pick<Runner, "status" | "stages" | "manifestOf">;

/** A runner over the data dir; `options`: what `run` was given besides the config. */
export function runnerFor(
  stages: readonly Stage<unknown>[],
  loaded: ReturnType<typeof loadFromArgs>,
  options: { limit?: number | undefined } & Omit<ServiceOptions, "dataDir" | "log"> = {},
): Runner {
  const { limit, ...rest } = options;
  const log = createLogger();
  const services = createServices(loaded.config, { dataDir: loaded.config.data_dir, log, ...rest });
  return new Runner(stages, loaded, { services, log, ...(limit !== undefined ? { limit } : {}) });
}

/** Each stage's state as the runner judges it (stale, running elsewhere), for stages that have run. */
export function judgedStates(runner: Pick<Runner, "status" | "stages">): Judged {
  const states: Judged = {};
  for (const stage of runner.stages) {
    const status = runner.status(stage.name);
    if (status.state !== "not started") states[stage.name] = { state: status.state, reason: status.reason };
  }
  return states;
}

/** What the report reads: the runner's judgement and its one reading of each manifest (shards summed). */
async function runnerView(
  runner: RunnerView,
): Promise<{ states: Judged; manifests: Map<string, Manifest | undefined> }> {
  const manifests = new Map<string, Manifest | undefined>();
  for (const stage of runner.stages) manifests.set(stage.name, await runner.manifestOf(stage.name));
  return { states: judgedStates(runner), manifests };
}

/** Where the report of these stages is written, for the help texts: in the release stage's directory. */
export function reportPlace(registry: StageRegistry<ReportingStage>): string {
  const release = registry.releaseStage();
  return `<data_dir>/${release ? `${release.name}/` : ""}${REPORT_FILE}`;
}

/**
 * `run` of `targets`: a first Ctrl-C (or SIGTERM) finishes the records in flight and saves, a second
 * quits at once; then the services are closed and, when the run reached the release stage, the report
 * is rebuilt.
 */
export async function runAndReport(
  runner: Runner,
  targets: string[],
  options: RunOptions = {},
): Promise<void> {
  const controller = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    if (controller.signal.aborted) process.exit(130);
    process.stderr.write(
      `\n${signal}: finishing the records in flight and saving; press Ctrl-C again to quit at once\n`,
    );
    controller.abort();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  let reports: StageOutcome[];
  try {
    reports = await runner.run(targets, { ...options, signal: controller.signal });
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    await runner.options.services.close();
  }
  const report = await reportAfterRun(runner, reports);
  if (report) runner.log.info(`report: ${report}`);
}

/**
 * After `run`: when the release stage ran (or was found up to date), the report is rebuilt from the
 * manifests, every one of them final by now, the release stage's own included. Returns the report's
 * path, if it wrote one.
 */
export async function reportAfterRun(
  runner: RunnerView & Pick<Runner, "loaded">,
  reports: readonly { stage: string; action: string }[],
): Promise<string | undefined> {
  const registry = new StageRegistry<ReportingStage>(runner.stages, runner.loaded.config);
  const release = registry.releaseStage();
  if (!release || !reports.some((r) => r.stage === release.name && r.action !== "estimated"))
    return undefined;
  const { file } = await writeReport(runner.loaded.config.data_dir, {
    registry,
    ...(await runnerView(runner)),
    disabled: registry.disabledDialogueStages(runner.loaded.config.stages),
  });
  return file;
}

export function reportCommand(stages: readonly Stage<unknown>[]): CommandModule {
  const registry = new StageRegistry<ReportingStage>(stages);
  const command: CommandModule<object, ReportArgs> = {
    command: "report",
    describe: `rebuild the run report (${reportPlace(registry)}) from whatever stages have run`,
    builder: (y) =>
      withDataOptions(y)
        .option("out", {
          type: "string",
          describe: `write the report here instead of ${reportPlace(registry)}`,
        })
        .option("screenshot", {
          type: "string",
          describe: "also render it in headless Chromium and save a PNG here (checks that every chart drew)",
        }),
    handler: async (args) => {
      const loaded = loadFromArgs(args, stages);
      // the methods a config declares (an audited dataset's) are this config's
      const configured = new StageRegistry<ReportingStage>(stages, loaded.config);
      const { file, data } = await writeReport(loaded.config.data_dir, {
        registry: configured,
        ...(await runnerView(runnerFor(stages, loaded))),
        disabled: configured.disabledDialogueStages(loaded.config.stages),
        ...(args.out ? { file: args.out } : {}),
      });
      const ran = data.stages.filter((s) => s.state !== "not run" && s.state !== DISABLED).map((s) => s.name);
      process.stderr.write(
        `report from ${ran.length ? ran.join(", ") : "no stage yet"}${[
          ["not run", "not run"],
          ["switched off", DISABLED],
        ]
          .map(([label, state]) => {
            const names = data.stages.filter((s) => s.state === state).map((s) => s.name);
            return names.length ? ` (${label}: ${names.join(", ")})` : "";
          })
          .join("")}\n`,
      );
      if (args.screenshot) {
        const { dom, size } = await viewInBrowser(file, { screenshot: args.screenshot });
        // the page's self-check marks each chart with the bars it expected and the bars that got a size
        const failed = [
          ...dom.matchAll(/data-chart="([^"]+)"[^>]*data-expected="(\d+)" data-drawn="(\d+)"/g),
        ].filter((m) => m[2] !== m[3] || m[2] === "0");
        if (failed.length) {
          process.stderr.write(`warning: charts that did not draw: ${failed.map((m) => m[1]).join(", ")}\n`);
        }
        if (size) process.stderr.write(`screenshot: ${size.width}x${size.height} (the whole page)\n`);
        process.stdout.write(`${args.screenshot}\n`);
      }
      process.stdout.write(`${file}\n`);
    },
  };
  return command as unknown as CommandModule;
}
