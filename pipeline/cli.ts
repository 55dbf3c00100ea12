// `pnpm pipeline <command>`: parse, call, print. Nothing else lives here.
import yargs from "yargs";
import { hideBin } from "yargs/helpers";
import { STAGES } from "../stages/index.js";
import { evalCommand } from "./cli/eval.js";
import { launchCommand } from "./cli/launch.js";
import { pipelineCommands } from "./cli/pipeline-commands.js";
import { pushCommand } from "./cli/push.js";
import { reportCommand } from "./cli/report.js";
import { sandboxCommand } from "./cli/sandbox.js";
import { UserError } from "./errors.js";
import type { Stage } from "./stage.js";

export async function main(
  argv: string[] = hideBin(process.argv),
  stages: readonly Stage<unknown>[] = STAGES,
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
  for (const command of pipelineCommands(stages)) cli = cli.command(command);
  cli = cli.command(sandboxCommand);
  cli = cli.command(evalCommand);
  cli = cli.command(pushCommand(stages));
  cli = cli.command(reportCommand(stages));
  cli = cli.command(launchCommand(stages));
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
