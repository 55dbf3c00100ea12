// The toy pipeline's CLI (toy-cli.ts: the runner's commands over toy-stages.ts) as the end-to-end
// tests of those commands run it: one command to its end in a child process, and a config for it in
// a fresh temporary dir.
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./temp-dir.js";

export const TOY_CLI = new URL("./toy-cli.ts", import.meta.url).pathname;
// tsx's loader by its absolute URL, so that a command started in another working dir finds it
const TSX = new URL("../../node_modules/tsx/dist/loader.mjs", import.meta.url).href;

export interface ToyCliOptions {
  /** set in the child's environment over this process's; an undefined value takes the variable out */
  env?: Record<string, string | undefined>;
  /** the child's working dir; default this process's */
  cwd?: string;
}

/** `toy-cli ...args`, run to its end (blocking: the command needs no server in this process). */
export function toyCli(
  args: string[],
  options: ToyCliOptions = {},
): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ["--import", TSX, TOY_CLI, ...args], {
    encoding: "utf8",
    env: { ...process.env, ...options.env },
    ...(options.cwd ? { cwd: options.cwd } : {}),
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A fresh dir with the config `c.yaml`: `data_dir: <dir>/data`, then `yaml` (default: 9 numbers). */
export function toyConfig(yaml = "stages:\n  numbers: {count: 9}\n"): {
  dir: string;
  config: string;
  data: string;
} {
  const dir = tempDir();
  const config = join(dir, "c.yaml");
  const data = join(dir, "data");
  writeFileSync(config, `data_dir: ${data}\n${yaml}`);
  return { dir, config, data };
}
