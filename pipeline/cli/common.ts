// Options and set-up shared by the commands that read or write pipeline data.
import type { Argv } from "yargs";
import { type LoadedConfig, loadConfig, type StageSchema } from "../config/load.js";
import { UserError } from "../errors.js";

export interface DataOptions {
  config: string;
  "data-dir"?: string;
  set?: string[];
}

export function withDataOptions<T>(yargs: Argv<T>): Argv<T & DataOptions> {
  return yargs
    .option("config", {
      type: "string",
      default: process.env.CODEFEEDBACK_CONFIG ?? "configs/default.yaml",
      describe:
        "YAML config file (configs/default.yaml: paper settings; configs/sample.yaml: bundled samples)",
    })
    .option("data-dir", { type: "string", describe: "where stage outputs live (overrides data_dir)" })
    .option("set", {
      type: "string",
      array: true,
      describe: "override a config key, e.g. --set stages.filter.threshold=4 (repeatable)",
    }) as Argv<T & DataOptions>;
}

/** `--limit 0` or `-1` would silently recompute every source stage to nothing. */
export function checkLimit(limit: number | undefined): void {
  if (limit === undefined || (Number.isInteger(limit) && limit >= 1)) return;
  throw new UserError(
    `--limit ${limit}: expected a whole number of rows, 1 or more (e.g. --limit 100); leave it out to take every row`,
  );
}

/** The config of the command's options, with the sections of `stages` checked in the same pass. */
export function loadFromArgs(args: DataOptions, stages: readonly StageSchema[]): LoadedConfig {
  return loadConfig(
    {
      file: args.config,
      sets: args.set ?? [],
      ...(args["data-dir"] ? { dataDir: args["data-dir"] } : {}),
    },
    stages,
  );
}
