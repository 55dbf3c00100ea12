// `pnpm pipeline sandbox <languages|run|serve>`: the sandbox's command-line face. Parse, call, print.
import { readFileSync } from "node:fs";
import type { Argv, CommandModule } from "yargs";
import { rawConfig, validate } from "../config/load.js";
import { UserError } from "../errors.js";
import {
  createCodeRunner,
  EmbeddedSandbox,
  listLanguages,
  type RunCodeRequest,
  type SandboxConfig,
  sandboxConfigSchema,
} from "../sandbox/index.js";
import { startSandboxServer } from "../sandbox/server.js";
import { printTable } from "./table.js";

interface ConfigOption {
  config?: string;
}

/** The `sandbox:` section of a YAML config file, validated alone (all defaults when no file is given). */
export function readSandboxConfig(file: string | undefined): SandboxConfig {
  if (!file) return sandboxConfigSchema.parse({});
  const lines = new Map<string, number>();
  const raw = rawConfig({ file }, lines);
  return validate(sandboxConfigSchema, raw.sandbox, ["sandbox"], file, lines);
}

function withConfig<T>(yargs: Argv<T>): Argv<T & ConfigOption> {
  return yargs.option("config", {
    type: "string",
    describe: "YAML config whose `sandbox:` section to use (default: built-in defaults)",
  }) as Argv<T & ConfigOption>;
}

function readText(path: string, what: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    throw new UserError(`cannot read ${what} ${path}: ${(error as Error).message}`);
  }
}

const languages: CommandModule<object, ConfigOption & { json?: boolean }> = {
  command: "languages",
  describe: "list the languages the sandbox runs, their versions and whether they are available here",
  builder: (y) => withConfig(y).option("json", { type: "boolean", default: false, describe: "print JSON" }),
  handler: async (args) => {
    const config = readSandboxConfig(args.config);
    const infos = await listLanguages();
    let isolation: string = config.isolation;
    if (!config.url && config.isolation === "bwrap") {
      const sandbox = new EmbeddedSandbox({ ...config, workers: 1 });
      const probe = await sandbox.isolation();
      await sandbox.close();
      const parts = [
        probe.mode,
        probe.launcher === "built" ? "launcher built" : "setpriv/prlimit/time",
        probe.spawner === "built" ? "spawner built" : "forked by Node",
        probe.cgroup ? `memory+pids cgroup v${probe.cgroup}` : `no cgroup (${probe.cgroupProblem})`,
        probe.prepared ? "sandboxes built ahead" : "sandboxes built per step",
      ];
      isolation = probe.mode ? `bwrap (${parts.join(", ")})` : `unavailable: ${probe.problem}`;
    }
    if (args.json) {
      process.stdout.write(`${JSON.stringify({ isolation, languages: infos }, null, 2)}\n`);
      return;
    }
    printTable(
      ["language", "available", "version", "name"],
      infos.map((info) => [
        info.id,
        info.available ? "yes" : "no",
        info.version ?? info.missing ?? "",
        info.name,
      ]),
    );
    process.stdout.write(`isolation: ${isolation}\n`);
  },
};

interface RunArgs extends ConfigOption {
  language: string;
  file: string;
  stdin?: string;
  "run-timeout"?: number;
  "compile-timeout"?: number;
  "memory-limit"?: number;
}

const run: CommandModule<object, RunArgs> = {
  command: "run",
  describe: "run one program in the sandbox and print the SandboxFusion result JSON",
  builder: (y) =>
    withConfig(y)
      .option("language", {
        alias: "l",
        type: "string",
        demandOption: true,
        describe: "language id (see `sandbox languages`)",
      })
      .option("file", { alias: "f", type: "string", demandOption: true, describe: "source file to run" })
      .option("stdin", { type: "string", describe: "file whose content is the program's standard input" })
      .option("run-timeout", { type: "number", describe: "run step limit, seconds" })
      .option("compile-timeout", { type: "number", describe: "compile step limit, seconds" })
      .option("memory-limit", { type: "number", describe: "memory limit, MiB" }) as Argv<RunArgs>,
  handler: async (args) => {
    const config = readSandboxConfig(args.config);
    const request: RunCodeRequest = { code: readText(args.file, "source file"), language: args.language };
    if (args.stdin !== undefined) request.stdin = readText(args.stdin, "stdin file");
    if (args["run-timeout"] !== undefined) request.run_timeout = args["run-timeout"];
    if (args["compile-timeout"] !== undefined) request.compile_timeout = args["compile-timeout"];
    if (args["memory-limit"] !== undefined) request.memory_limit_MB = args["memory-limit"];
    const runner = createCodeRunner(config);
    try {
      const response = await runner.run(request);
      process.stdout.write(`${JSON.stringify(response, null, 2)}\n`);
      process.exitCode = response.status === "Success" ? 0 : response.status === "Failed" ? 1 : 3;
    } finally {
      await runner.close();
    }
  },
};

interface ServeArgs extends ConfigOption {
  port: number;
  host: string;
}

const serve: CommandModule<object, ServeArgs> = {
  command: "serve",
  describe: "serve SandboxFusion's POST /run_code and POST /run_jupyter over HTTP",
  builder: (y) =>
    withConfig(y)
      .option("port", {
        alias: "p",
        type: "number",
        default: 8080,
        describe: "port to listen on (0: any free port)",
      })
      .option("host", {
        type: "string",
        default: "127.0.0.1",
        describe: "address to bind (0.0.0.0 exposes it to the network)",
      }) as Argv<ServeArgs>,
  handler: async (args) => {
    const config = readSandboxConfig(args.config);
    if (config.url) {
      throw new UserError(
        `sandbox.url is set (${config.url}): a server runs code itself; remove sandbox.url from the config used to serve.`,
      );
    }
    const runner = createCodeRunner(config);
    const server = await startSandboxServer({
      runner,
      host: args.host,
      port: args.port,
      maxBodyBytes: Math.ceil(config.max_request_bytes * 1.4) + 65536,
      maxPendingBytes: config.max_pending_bytes,
      maxOutputBytes: config.max_output_bytes,
    });
    process.stdout.write(`sandbox listening on ${server.url} (POST /run_code, POST /run_jupyter)\n`);
    await new Promise<void>((resolve) => {
      const stop = () => resolve();
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
    });
    await server.close();
    await runner.close();
  },
};

export const sandboxCommand: CommandModule<object, object> = {
  command: "sandbox <command>",
  describe: "run code in the isolated multi-language sandbox (languages, run, serve)",
  builder: (y) =>
    y
      .command(languages)
      .command(run)
      .command(serve)
      .demandCommand(1, "name a sandbox command: languages, run or serve"),
  handler: () => {},
};
