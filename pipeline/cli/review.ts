// `pnpm pipeline review` (the review app, `mark`, `export-marks`) and `pnpm pipeline show`: people
// look at what each stage made and judge it (pipeline/review/). The runner answers which files hold
// a stage's records and where it stands; the app reads them and nothing else of the run.
import { createWriteStream } from "node:fs";
import { userInfo } from "node:os";
import type { CommandModule } from "yargs";
import { FEEDBACK_CATEGORIES } from "../../stages/simulate/categories.js";
import { UserError } from "../errors.js";
import { formatBytes } from "../log.js";
import { ReviewApp } from "../review/app.js";
import { REVIEW_REASONS } from "../review/marks.js";
import type { ReviewSource } from "../review/records.js";
import { serveReview } from "../review/server.js";
import { viewText } from "../review/view.js";
import type { Runner } from "../runner.js";
import type { Stage } from "../stage.js";
import { type DataOptions, loadFromArgs, withDataOptions } from "./common.js";
import { runnerFor } from "./report.js";

/** A bad mark's reasons: the paper's ten feedback categories, then the review's own. */
export const MARK_REASONS: readonly string[] = [...FEEDBACK_CATEGORIES, ...REVIEW_REASONS];

/** The stage the app opens on: the validated dialogues, where a verdict counts. */
const DEFAULT_STAGE = "validate";

function sourceOf(runner: Runner): ReviewSource {
  const maker = runner.stages.find((s) => s.release);
  const from = runner.stages.some((s) => s.name === DEFAULT_STAGE) ? DEFAULT_STAGE : undefined;
  return {
    dataDir: runner.dataDir,
    stages: runner.stages.map((s) => s.name),
    // export releases validate's dialogues, less those it rejects itself
    ...(maker && from ? { release: { stage: maker.name, from } } : {}),
    look: (name) => {
      const status = runner.status(name);
      const stores = status.shards
        ? status.shards.map((shard) => runner.store(name, shard))
        : [runner.store(name)];
      return { name, state: status.state, reason: status.reason, parts: stores.flatMap((s) => s.parts()) };
    },
  };
}

function openApp(stages: readonly Stage<unknown>[], args: DataOptions): ReviewApp {
  const runner = runnerFor(stages, loadFromArgs(args, stages));
  return new ReviewApp(sourceOf(runner), MARK_REASONS);
}

const defaultReviewer = () => process.env.CODEFEEDBACK_REVIEWER || userInfo().username;

type ServeArgs = DataOptions & {
  stage?: string;
  port: number;
  host: string;
  token?: string;
  reviewer?: string;
  sample?: number;
  seed: number;
};
type MarkArgs = DataOptions & {
  id: string;
  verdict: string;
  reason?: string;
  note?: string;
  reviewer?: string;
  stage: string;
};
type ExportArgs = DataOptions & { out?: string };
type ShowArgs = DataOptions & { stage: string; id: string; json: boolean };

export function reviewCommands(stages: readonly Stage<unknown>[]): CommandModule[] {
  const names = stages.map((s) => s.name);
  const fallback = names.includes(DEFAULT_STAGE) ? DEFAULT_STAGE : names[0]!;
  const stageOption = {
    type: "string",
    default: fallback,
    describe: "the stage whose records to look at",
  } as const;

  const mark: CommandModule<object, MarkArgs> = {
    command: "mark <id> <verdict>",
    describe: "record a verdict on a record without a browser",
    builder: (y) =>
      withDataOptions(y)
        .positional("id", { type: "string", demandOption: true })
        .positional("verdict", { type: "string", choices: ["good", "bad"], demandOption: true })
        .option("reason", { type: "string", describe: `why it is bad: ${MARK_REASONS.join(", ")}` })
        .option("note", { type: "string", describe: "a free note" })
        .option("reviewer", {
          type: "string",
          describe: "your name (default: $CODEFEEDBACK_REVIEWER, else your login)",
        })
        .option("stage", stageOption),
    handler: (args) => {
      const app = openApp(stages, args);
      try {
        const made = app.mark({ ...args, reviewer: args.reviewer ?? defaultReviewer() });
        process.stderr.write(
          `${made.id}: marked ${made.verdict}${made.reason ? ` (${made.reason})` : ""} by ${made.reviewer}\n`,
        );
      } finally {
        app.close();
      }
    },
  };

  const exportMarks: CommandModule<object, ExportArgs> = {
    command: "export-marks",
    describe: "write every mark as JSONL (stdout, or --out)",
    builder: (y) => withDataOptions(y).option("out", { type: "string", describe: "file to write" }),
    handler: async (args) => {
      const app = openApp(stages, args);
      const out: NodeJS.WritableStream = args.out ? createWriteStream(args.out) : process.stdout;
      try {
        for (const m of app.allMarks()) {
          if (!out.write(`${JSON.stringify(m)}\n`))
            await new Promise<void>((r) => out.once("drain", () => r()));
        }
      } finally {
        app.close();
        if (args.out) await new Promise<void>((r) => out.end(() => r()));
      }
    },
  };

  const review: CommandModule<object, ServeArgs> = {
    command: "review",
    describe: "serve the review app: look at any stage's records and judge them",
    builder: (y) =>
      withDataOptions(y)
        .command(mark as unknown as CommandModule)
        .command(exportMarks as unknown as CommandModule)
        .option("stage", {
          type: "string",
          choices: names,
          describe: `the stage to open (default: ${fallback})`,
        })
        .option("port", { type: "number", default: 8737, describe: "port to listen on (0: any free one)" })
        .option("host", {
          type: "string",
          default: "127.0.0.1",
          describe: "address to listen on; anything but loopback needs --token",
        })
        .option("token", {
          type: "string",
          describe: "a secret every request must carry (default: $CODEFEEDBACK_REVIEW_TOKEN)",
        })
        .option("reviewer", {
          type: "string",
          describe: "your name on marks (default: $CODEFEEDBACK_REVIEWER, else your login)",
        })
        .option("sample", {
          type: "number",
          describe: "walk a queue of N records stratified by method and language",
        })
        .option("seed", { type: "number", default: 0, describe: "the queue's seed" }),
    handler: async (args) => {
      const app = openApp(stages, args);
      const stage = args.stage ?? fallback;
      const token = args.token ?? process.env.CODEFEEDBACK_REVIEW_TOKEN;
      if (args.sample !== undefined && !(Number.isInteger(args.sample) && args.sample >= 1))
        throw new UserError(`--sample ${args.sample}: expected a whole number of records, 1 or more`);
      if (!app.hasRuns())
        process.stderr.write(
          `note: ${app.source.dataDir} holds no run yet: the app has nothing to show until \`pnpm pipeline run <stage>\` commits records there\n`,
        );
      // made once and kept: later starts, and every request, read only what the stages appended since
      for (const name of names)
        app.index.refresh(name, (bytes) =>
          process.stderr.write(`indexing ${name} (${formatBytes(bytes)})\n`),
        );
      const queue = args.sample !== undefined ? app.sample(stage, args.sample, args.seed) : undefined;
      const server = await serveReview(app, {
        host: args.host,
        port: args.port,
        token,
        reviewer: args.reviewer ?? defaultReviewer(),
        stage,
        ...(queue ? { queue } : {}),
      });
      process.stderr.write(`review app: ${server.url}\n`);
      await new Promise<void>((resolve) => {
        const stop = () => {
          process.off("SIGINT", stop);
          process.off("SIGTERM", stop);
          server.close().then(resolve, resolve);
        };
        process.on("SIGINT", stop);
        process.on("SIGTERM", stop);
      });
      app.close();
    },
  };

  const show: CommandModule<object, ShowArgs> = {
    command: "show <stage> <id>",
    describe: "print one record as the review app shows it",
    builder: (y) =>
      withDataOptions(y)
        .positional("stage", { type: "string", demandOption: true, describe: "a stage's name" })
        .positional("id", { type: "string", demandOption: true })
        .option("json", { type: "boolean", default: false, describe: "print the view as JSON" }),
    handler: (args) => {
      const app = openApp(stages, args);
      try {
        const view = app.record(args.stage, args.id);
        process.stdout.write(
          args.json ? `${JSON.stringify(view, null, 2)}\n` : `${viewText(view).join("\n")}\n`,
        );
      } finally {
        app.close();
      }
    },
  };
  return [review, show] as unknown as CommandModule[];
}
