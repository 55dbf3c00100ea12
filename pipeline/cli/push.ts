// `pnpm pipeline push --repo OWNER/NAME [--private] [--revision BRANCH]`: uploads the release (the
// directory of the stage that declares `release`: export's) to a dataset repository on the hub
// (hub.endpoint / HF_ENDPOINT, token in $HF_TOKEN or hub.token_env).
import path from "node:path";
import type { CommandModule } from "yargs";
import { UserError } from "../errors.js";
import { pushDirectory } from "../hub/push.js";
import { createLogger } from "../log.js";
import { StageRegistry } from "../registry.js";
import type { ReportingStage } from "../report/contract.js";
import { REPORT_FILE } from "../report/index.js";
import { readSummary } from "../report/view.js";
import type { Stage } from "../stage.js";
import type { Manifest } from "../store/manifest.js";
import { type DataOptions, loadFromArgs, withDataOptions } from "./common.js";
import { judgedStates, runnerFor } from "./report.js";

type PushArgs = DataOptions & { repo: string; private: boolean; revision: string };

/** The files the release stage says it wrote (name -> sha256), read through its summary's schema. */
function releaseFiles(stage: ReportingStage, manifest: Manifest, dir: string): Map<string, string> {
  const read = readSummary(stage, manifest.stats);
  if (!read?.ok) {
    throw new UserError(
      `the ${stage.name} in ${dir} does not say which files it wrote (${read ? `summary unreadable: ${read.reason}` : "no summary"}); ` +
        `write it again with \`pnpm pipeline run ${stage.name} --force\`, then push`,
    );
  }
  return new Map(stage.release!.files(read.summary).map((f) => [f.name, f.sha256]));
}

export function pushCommand(stages: readonly Stage<unknown>[]): CommandModule {
  const release = new StageRegistry<ReportingStage>(stages).releaseStage();
  const what = release ? `the ${release.name} (<data_dir>/${release.name})` : "the release";
  const command: CommandModule<object, PushArgs> = {
    command: "push",
    describe: `upload ${what} to a dataset repository on the hub; a rerun sends only what is missing`,
    builder: (y) =>
      withDataOptions(y)
        .option("repo", {
          type: "string",
          demandOption: true,
          describe: "the dataset repository, OWNER/NAME",
        })
        .option("private", {
          type: "boolean",
          default: false,
          describe: "create the repository private (an existing one keeps its visibility)",
        })
        .option("revision", {
          type: "string",
          default: "main",
          describe: "the branch to commit to (created from the default branch if missing)",
        }),
    handler: async (args) => {
      const loaded = loadFromArgs(args, stages);
      if (!release) throw new UserError("nothing to push: no stage of this pipeline declares a release");
      const name = release.name;
      const dir = path.join(loaded.config.data_dir, name);
      // the runner's reading of the release stage's manifest and state
      const runner = runnerFor(stages, loaded);
      const manifest = await runner.manifestOf(name);
      if (!manifest) {
        throw new UserError(
          `nothing to push: ${dir} holds no ${name}; run \`pnpm pipeline run ${name}\` first`,
        );
      }
      const judged = judgedStates(runner)[name];
      const state = judged?.state ?? manifest.state;
      if (state !== "complete") {
        throw new UserError(
          `the ${name} in ${dir} is ${state}${judged?.reason ? ` (${judged.reason})` : ""}; ` +
            `bring it up to date with \`pnpm pipeline run ${name}\`, then push`,
        );
      }
      const listed = releaseFiles(release, manifest, dir);
      const log = createLogger("push");
      const controller = new AbortController();
      const onSignal = () => {
        process.stderr.write("\ninterrupted: stopping the upload in flight; rerun to continue\n");
        controller.abort();
      };
      process.once("SIGINT", onSignal);
      process.once("SIGTERM", onSignal);
      try {
        const result = await pushDirectory({
          dir,
          repo: args.repo,
          private: args.private,
          revision: args.revision,
          hub: loaded.config.hub,
          log,
          signal: controller.signal,
          // what the release stage wrote (and the report), nothing else of its directory
          include: (file: string) => listed.has(file) || file === REPORT_FILE,
          expect: listed,
        });
        process.stdout.write(
          `${result.repo}@${result.revision}: ${result.uploaded.length} file(s) sent in ${result.commits.length} commit(s), ` +
            `${result.unchanged.length} already there\n`,
        );
      } finally {
        process.off("SIGINT", onSignal);
        process.off("SIGTERM", onSignal);
      }
    },
  };
  return command as unknown as CommandModule;
}
