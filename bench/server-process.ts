// A benchmark's test server as a process of its own, so that its CPU is not the measured process's:
// a script started under tsx (or as given), heard from a line at a time on its stdout, where the test
// servers write their URL first and answer SIGUSR2 with their counts.
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";

export interface ServerProcess {
  child: ChildProcess;
  /** the next line it writes; fails if it exits first */
  next(): Promise<string>;
  stop(): void;
}

/** This process's heap flags (`--max-...`, as `pnpm bench` gives package.json's), for a server to run like it. */
export function heapFlags(): string[] {
  return process.execArgv.filter((a) => a.startsWith("--max-"));
}

/** `node ...node script ...args`; `node` defaults to tsx's loader and nothing else. */
export function startServerProcess(
  script: string,
  args: readonly string[],
  node: readonly string[] = ["--import", "tsx"],
): ServerProcess {
  const child = spawn(process.execPath, [...node, script, ...args], { stdio: ["ignore", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout! });
  const unread: string[] = [];
  const waiting: { resolve(line: string): void; reject(error: Error): void }[] = [];
  lines.on("line", (line) => {
    const reader = waiting.shift();
    if (reader) reader.resolve(line);
    else unread.push(line);
  });
  child.once("exit", (code) => {
    for (const reader of waiting.splice(0)) reader.reject(new Error(`${script} exited with ${code}`));
  });
  return {
    child,
    next: () => {
      const line = unread.shift();
      if (line !== undefined) return Promise.resolve(line);
      if (child.exitCode !== null || child.signalCode !== null) {
        return Promise.reject(new Error(`${script} exited with ${child.exitCode}`));
      }
      return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
    },
    stop: () => child.kill("SIGTERM"),
  };
}
