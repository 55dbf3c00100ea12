// `pnpm pipeline push --repo OWNER/NAME [--private] [--revision BRANCH]`: uploads the export to a
// dataset repository on the hub (hub.endpoint / HF_ENDPOINT, token in $HF_TOKEN or hub.token_env).
import path from "node:path";
import type { CommandModule } from "yargs";
import { UserError } from "../errors.js";
import { pushDirectory } from "../hub/push.js";
import { createLogger } from "../log.js";
import { REPORT_FILE } from "../report/index.js";
import type { Stage } from "../stage.js";
import { readManifest } from "../store/manifest.js";
import { type DataOptions, loadFromArgs, withDataOptions } from "./common.js";
import { judgedStates, runnerFor } from "./report.js";

type PushArgs = DataOptions & { repo: string; private: boolean; revision: string };

/** The files export says it wrote (name and sha256), from its manifest's summary. */
function exportedFiles(stats: Record<string, unknown> | undefined): Map<string, string> | undefined {
  const files = stats?.files;
  if (!Array.isArray(files)) return undefined;
  const out = new Map<string, string>();
  for (const f of files as { name?: unknown; sha256?: unknown }[]) {
    if (typeof f.name === "string") out.set(f.name, typeof f.sha256 === "string" ? f.sha256 : "");
  }
  return out;
}

export function pushCommand(stages: readonly Stage<unknown>[]): CommandModule {
  const command: CommandModule<object, PushArgs> = {
    command: "push",
    describe:
      "upload the export (<data_dir>/export) to a dataset repository on the hub; a rerun sends only what is missing",
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
      const loaded = loadFromArgs(args);
      const dir = path.join(loaded.config.data_dir, "export");
      // the runner's reading of export's manifest and state, when the CLI has the export stage
      const runner = stages.some((s) => s.name === "export") ? runnerFor(stages, loaded) : undefined;
      const manifest = runner ? await runner.manifestOf("export") : readManifest(dir);
      if (!manifest) {
        throw new UserError(
          `nothing to push: ${dir} holds no export; run \`pnpm pipeline run export\` first`,
        );
      }
      const judged = runner ? judgedStates(runner).export : undefined;
      const state = judged?.state ?? manifest.state;
      if (state !== "complete") {
        throw new UserError(
          `the export in ${dir} is ${state}${judged?.reason ? ` (${judged.reason})` : ""}; ` +
            "bring it up to date with `pnpm pipeline run export`, then push",
        );
      }
      const listed = exportedFiles(manifest.stats);
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
          // what export wrote (and the report), nothing else of the stage directory
          ...(listed
            ? { include: (name: string) => listed.has(name) || name === REPORT_FILE, expect: listed }
            : {}),
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
