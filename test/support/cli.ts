// The pipeline CLI as a user runs it, in a child process: `node --import tsx pipeline/main.ts ARGS`
// from the repository root, its output collected. The end-to-end tests' one way to start it; each
// adds its own config and options to ARGS.
import { spawn } from "node:child_process";

/** The repository root, where the CLI runs, so that relative paths (configs/sample.yaml) resolve. */
export const ROOT = new URL("../../", import.meta.url).pathname;
/** The CLI's entry point. */
export const MAIN = new URL("../../pipeline/main.ts", import.meta.url).pathname;

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** set in the child's environment over this process's; an undefined value takes the variable out */
  env?: Record<string, string | undefined>;
  /** another tsx entry point than the CLI's */
  entry?: string;
  /** polled every millisecond; once true, the child gets `killSignal` (SIGKILL by default) */
  killWhen?: () => boolean;
  killSignal?: NodeJS.Signals;
}

/** Runs the CLI without blocking (the test servers answer from this very process); done once its output is closed. */
export function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  const { killWhen } = options;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", options.entry ?? MAIN, ...args], {
      cwd: ROOT,
      env: { ...process.env, ...options.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const poll = killWhen
      ? setInterval(() => {
          if (killWhen()) {
            clearInterval(poll);
            child.kill(options.killSignal ?? "SIGKILL");
          }
        }, 1)
      : undefined;
    child.on("error", (error) => {
      clearInterval(poll);
      reject(error);
    });
    child.on("close", (code, signal) => {
      clearInterval(poll);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** The options that run a command on configs/sample.yaml with its data in `dataDir`, each of `sets` set over it. */
export function onSamples(dataDir: string, sets: string[] = []): string[] {
  return ["--config", "configs/sample.yaml", "--data-dir", dataDir, ...sets.flatMap((set) => ["--set", set])];
}
