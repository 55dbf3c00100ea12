// `pnpm pipeline <command>`: parse, call, print. Nothing else lives here.
import yargs, { type CommandModule } from "yargs";
import { hideBin } from "yargs/helpers";
import { sandboxCommand } from "./cli/sandbox.js";
import { UserError } from "./errors.js";
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
  for (const command of await commands(argv, stages)) cli = cli.command(command);
  try {
    await cli.parseAsync();
  } catch (error) {
    if (error instanceof UserError) {
      process.stderr.write(`error: ${error.message}\n`);
      process.exit(error.exitCode);
    }
    throw error;
  }
}
