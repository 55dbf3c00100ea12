// `pnpm pipeline audit FILE_OR_DATASET`: the one-source run that audits a dialogue dataset (a source with
// `adapter: dialogues`) through download, validate and export, the stages that make dialogues switched
// off, then its verdict: released, dropped by reason, by language. It is a run like any other (its own
// data dir, resumable after a kill), and no stage it runs asks an LLM.
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { stringify } from "yaml";
import type { CommandModule } from "yargs";
import type { AuditVerdict } from "../../stages/export/stats.js";
import { isSecretSet, loadConfig, rawConfig } from "../config/load.js";
import { UserError } from "../errors.js";
import { matchLocalPath } from "../hub/local-files.js";
import { shellQuote } from "../launch/invocation.js";
import { createLogger, type Logger } from "../log.js";
import { formatOfName } from "../readers/index.js";
import type { Stage } from "../stage.js";
import { writeDurably } from "../store/manifest.js";
import type { DataOptions } from "./common.js";
import { withDataOptions } from "./common.js";
import { runAndReport, runnerFor } from "./report.js";
import { printTable } from "./table.js";

type AuditArgs = DataOptions & { dataset: string; name?: string; files: string[] };

const REPO = /^[\w.-]+\/[\w.-]+$/;
const GLOB = /[*?[]/;

/** A source name from a file or dataset name: `Code_Feedback.jsonl` -> `code_feedback`. */
function sourceName(dataset: string): string {
  const base = path
    .basename(dataset.replace(/[/\\]+$/, ""))
    .replace(/(\.(jsonl|ndjson|json|parquet))?(\.gz)?$/i, "");
  const name = base
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, "-")
    .replace(/^[^a-z0-9]+|-+$/g, "");
  return name || "audit";
}

/** The one source of the run: local files where the argument names some, else a hub dataset. */
function auditSource(dataset: string, name: string, files: readonly string[]): Record<string, unknown> {
  if (existsSync(dataset) || GLOB.test(dataset)) {
    // said here of the argument, not later of stages.download.sources[0].path, a key the user never wrote
    if (matchLocalPath(dataset, (file) => formatOfName(file) !== undefined).length === 0)
      throw new UserError(
        `${dataset} matches no JSONL, JSON or Parquet file (from ${process.cwd()}); give a file, a directory holding some, or a glob`,
      );
    return { name, adapter: "dialogues", path: dataset };
  }
  if (REPO.test(dataset)) return { name, adapter: "dialogues", repo: dataset, files: [...files] };
  throw new UserError(
    `${dataset}: no such file or directory, and not a hub dataset id (owner/name); give a JSONL, JSON or Parquet file, a directory, a glob, or a dataset id`,
  );
}

export function auditCommand(stages: readonly Stage<unknown>[]): CommandModule {
  const command: CommandModule<object, AuditArgs> = {
    command: "audit <dataset>",
    describe:
      "audit a dialogue dataset (a file, directory, glob or hub dataset): run its code in the sandbox, release what passes, print the verdict",
    builder: (y) =>
      withDataOptions(y)
        .positional("dataset", {
          type: "string",
          demandOption: true,
          describe: "a JSONL/JSON/Parquet file, a directory, a glob, or a hub dataset id (owner/name)",
        })
        .option("name", {
          type: "string",
          describe:
            "the source's name, which prefixes the dialogues' ids (default: from the file or dataset name)",
        })
        .option("files", {
          type: "string",
          array: true,
          default: ["**/*.jsonl"],
          describe: "for a hub dataset: the files to read (paths or globs)",
        }),
    handler: async (args) => {
      const name = args.name ?? sourceName(args.dataset);
      const source = auditSource(args.dataset, name, args.files);
      const sets = [
        `stages.download.sources=${JSON.stringify([source])}`,
        // the stages that make dialogues ask an LLM; an audit only checks the dialogues it is given
        ...stages.filter((s) => s.switchable).map((s) => `stages.${s.name}.enabled=false`),
        // there are no seed pairs to decontaminate, so no benchmark is fetched
        "stages.dedup.decontaminate=false",
        ...(args.set ?? []),
      ];
      const dataDir = args["data-dir"] ?? path.join("data", "audits", name);
      // checked against the user's file first, so that a mistake names its line or its --set
      loadConfig({ file: args.config, sets, dataDir }, stages);
      const log = createLogger();
      // a key given by --set stays out of the file, as it stays out of every file the pipeline writes
      const secrets = sets.filter(isSecretSet);
      const file = writeAuditConfig(
        rawConfig({ file: args.config, sets: sets.filter((set) => !isSecretSet(set)), dataDir }),
        args.config,
        dataDir,
        log,
      );
      const loaded = loadConfig({ file, sets: secrets });
      const runner = runnerFor(stages, loaded);
      await runAndReport(runner, ["export"]);
      const verdicts = (runner.status("export").manifest?.stats as { audits?: AuditVerdict[] } | undefined)
        ?.audits;
      const verdict = verdicts?.find((v) => v.method === name);
      if (!verdict) throw new Error(`export has no verdict on ${name}`);
      log.info(`release: ${path.join(loaded.config.data_dir, "export")}`);
      // status, cat and report judge a data dir by the config they are given: this run's is that file
      const options = `--config ${shellQuote(file)} --data-dir ${shellQuote(dataDir)}`;
      const keys =
        secrets.length > 0 ? ` (and your --set of ${secrets.map((s) => s.split("=")[0]).join(", ")})` : "";
      log.info(`status, cat and report read this run with: ${options}${keys}`);
      printVerdict(verdict);
    },
  };
  return command as unknown as CommandModule;
}

/** The audit's config, in its data dir: what status, cat and report read it with. */
export const AUDIT_CONFIG = "audit.yaml";

/**
 * Writes the audit's one-source config to <data dir>/audit.yaml (whole or not at all), where status,
 * cat and report read it. A rerun with the same options leaves it as it is; other options replace it,
 * and the stages whose config they change run again.
 */
function writeAuditConfig(raw: Record<string, unknown>, from: string, dataDir: string, log: Logger): string {
  const file = path.join(dataDir, AUDIT_CONFIG);
  const text = `# The config of the audit in this data dir, made by \`pnpm pipeline audit\` from ${from} and its options.\n# status, cat and report read this run with --config ${file}.\n${stringify(raw)}`;
  let before: string | undefined;
  try {
    before = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  if (before === text) return file;
  if (before !== undefined) log.info(`${file}: the audit's options changed; it now holds the new ones`);
  mkdirSync(dataDir, { recursive: true });
  writeDurably(file, text);
  return file;
}

function printVerdict(v: AuditVerdict): void {
  const out = process.stdout;
  out.write(`${v.method} (${v.where}): pass rate ${(v.pass_rate * 100).toFixed(1)}%\n\n`);
  printTable(
    ["verdict", "dialogues"],
    [
      ["read", v.read],
      ["released", v.released],
      ...Object.entries(v.released_by).map(([outcome, n]) => [`  ${outcome}`, n]),
      ["dropped", v.dropped],
      ...Object.entries(v.dropped_by).map(([reason, n]) => [`  ${reason}`, n]),
    ],
  );
  out.write("\n");
  printTable(
    ["language", "released", "dropped"],
    Object.entries(v.by_lang)
      .sort((a, b) => b[1].released + b[1].dropped - (a[1].released + a[1].dropped))
      .map(([lang, c]) => [lang, c.released, c.dropped]),
  );
}
