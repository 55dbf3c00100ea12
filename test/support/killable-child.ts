// A child process the crash tests kill with -9: it runs `script` with `args` under tsx, and is
// SIGKILLed `killAfterMs` after `watch` appears (a stage's parts: it has started writing), or after it
// starts when `early` is set; never when `killAfterMs` is undefined. Says whether it finished (its
// stdout said "done") or was killed; anything else is an error with its stderr.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";

export interface KillOptions {
  /** the path whose appearance starts the countdown */
  watch: string;
  killAfterMs?: number | undefined;
  /** count from the start instead of from `watch` */
  early?: boolean;
}

export function runKillableChild(script: string, args: string[], o: KillOptions): Promise<"done" | "killed"> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", script, ...args], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    let timer: NodeJS.Timeout | undefined;
    const arm = () => (timer = setTimeout(() => child.kill("SIGKILL"), o.killAfterMs));
    const poll =
      o.killAfterMs === undefined || o.early
        ? undefined
        : setInterval(() => {
            if (existsSync(o.watch)) {
              clearInterval(poll);
              arm();
            }
          }, 10);
    if (o.killAfterMs !== undefined && o.early) arm();
    // "close", not "exit": stdout is read to its end before "done" is looked for
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      clearInterval(poll);
      if (signal === "SIGKILL") resolve("killed");
      else if (code === 0 && out.includes("done")) resolve("done");
      else reject(new Error(`child exited ${code}: ${err}`));
    });
  });
}
