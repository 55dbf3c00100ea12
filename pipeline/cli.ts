// `pnpm pipeline <command>`: parse, call, print. Nothing else lives here.
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import yargs, { type CommandModule } from "yargs";
import { hideBin } from "yargs/helpers";
import { sandboxCommand } from "./cli/sandbox.js";
import { diskFull, UserError } from "./errors.js";
import type { Stage } from "./stage.js";

/**
 * The commands, each module loaded only when a command may need it: `sandbox ...` loads none of the
 * stages and their libraries, so `sandbox serve`, which forks itself for every program it starts,
 * stays small (a fork copies the page tables of all the memory the process holds).
 */
async function commands(argv: string[], given: readonly Stage<unknown>[] | undefined) {
  if (argv[0] === "sandbox") return [sandboxCommand] as CommandModule[];
  const [registry, pipeline, evaluate, push, report, launch] = await Promise.all([
    given ? undefined : import("../stages/index.js"),
    import("./cli/pipeline-commands.js"),
    import("./cli/eval.js"),
    import("./cli/push.js"),
    import("./cli/report.js"),
    import("./cli/launch.js"),
  ]);
  const stages = given ?? registry!.STAGES;
  return [
    ...pipeline.pipelineCommands(stages),
    sandboxCommand,
    evaluate.evalCommand,
    push.pushCommand(stages),
    report.reportCommand(stages),
    launch.launchCommand(stages),
  ] as CommandModule[];
}

export async function main(
  argv: string[] = hideBin(process.argv),
  stages?: readonly Stage<unknown>[],
): Promise<void> {
  let cli = yargs(argv)
    .scriptName("pnpm pipeline")
    .usage("$0 <command> [options]")
    .strict()
    .demandCommand(1, "name a command; see --help")
    .recommendCommands()
    .help()
    .alias("h", "help")
    .option("verbose", { type: "boolean", global: true, describe: "print the stack trace of an error" })
    .wrap(Math.min(110, process.stdout.columns ?? 110))
    .fail((message, error) => {
      if (error) throw error;
      process.stderr.write(`${message}\nRun with --help for usage.\n`);
      process.exit(2);
    });
  // `... | head` closes the pipe early: that is the reader being done, not an error
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(0);
    throw error;
  });
  const verbose = argv.includes("--verbose");
  // a write failing in a timer or a stream's callback reaches no await: it ends the run the same way
  process.on("uncaughtException", (error) => fail(error, verbose));
  process.on("unhandledRejection", (error) => fail(error, verbose));
  for (const command of await commands(argv, stages)) cli = cli.command(command);
  try {
    await cli.parseAsync();
  } catch (error) {
    fail(error, verbose);
  }
}

/**
 * Ends the process on an error: a UserError (a full disk is one) as its message and code; anything
 * else is a bug, told in one line with a log file holding its stack.
 */
function fail(error: unknown, verbose: boolean): never {
  const known = error instanceof UserError ? error : diskFull(error);
  const stack = (error as Error)?.stack ?? String(error);
  if (known) {
    process.stderr.write(`error: ${known.message}\n${verbose ? `${stack}\n` : ""}`);
    process.exit(known.exitCode);
  }
  const where = /\n\s+at (?:.*\()?(?:file:\/\/)?([^()\s]+:\d+):\d+\)?/.exec(stack)?.[1];
  const what = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  let log = join(
    tmpdir(),
    `codefeedback-error-${new Date().toISOString().replace(/[:.]/g, "-")}-${process.pid}.log`,
  );
  try {
    writeFileSync(log, `${stack}\n`);
  } catch {
    log = "";
  }
  process.stderr.write(
    `error (a bug, please report it): ${what.split("\n")[0]}${where ? ` at ${where}` : ""}` +
      `${log ? `; the stack is in ${log}` : ""}\n${verbose || !log ? `${stack}\n` : ""}`,
  );
  // EX_SOFTWARE: a bug, which none of README's exit codes describes
  process.exit(70);
}
