// Runs one pipeline command as its own process, exactly as `pnpm pipeline ...` starts it (the Node
// flags of package.json's `pipeline` script), and measures it from outside: wall time here, peak RSS
// and CPU time from the process itself (measure.mjs, preloaded through NODE_OPTIONS, so the shard
// processes a `launch` starts are measured too), and the stage directory's size on disk afterwards.
import { spawn } from "node:child_process";
import { createWriteStream, existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { pipelineArgs, REPO_ROOT } from "../node.js";

const MEASURE = fileURLToPath(new URL("./measure.mjs", import.meta.url));

export interface ProcessUsage {
  pid: number;
  argv: string[];
  code: number;
  maxRssKiB: number;
  cpuS: number;
  wallS: number;
}

export interface CommandResult {
  code: number;
  wallS: number;
  /** every pipeline process the command ran (one, or the launcher and its shards) */
  processes: ProcessUsage[];
  /** the largest peak RSS of any one of them, MiB */
  peakRssMiB: number;
  /** CPU seconds of all of them together */
  cpuS: number;
}

/** `node <pipeline flags> --import tsx pipeline/main.ts ...args`, its output appended to `log`. */
export async function pipelineCommand(
  args: string[],
  opts: {
    env: Record<string, string>;
    log: string;
    usageFile: string;
    /** told the pid of the process as soon as it is started */
    started?: (pid: number | undefined) => void;
  },
): Promise<CommandResult> {
  const before = usageLines(opts.usageFile).length;
  const log = createWriteStream(opts.log, { flags: "a" });
  log.write(`\n$ pnpm pipeline ${args.join(" ")}\n`);
  const started = performance.now();
  const child = spawn(process.execPath, pipelineArgs(args), {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      ...opts.env,
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import=${MEASURE}`.trim(),
      BENCH_E2E_USAGE: opts.usageFile,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  opts.started?.(child.pid);
  child.stdout.pipe(log, { end: false });
  child.stderr.pipe(log, { end: false });
  const code = await new Promise<number>((resolve) => child.on("close", (c) => resolve(c ?? 1)));
  const wallS = (performance.now() - started) / 1000;
  await new Promise<void>((resolve) => log.end(() => resolve()));
  const processes = usageLines(opts.usageFile).slice(before);
  return {
    code,
    wallS,
    processes,
    peakRssMiB: Math.max(0, ...processes.map((p) => p.maxRssKiB / 1024)),
    cpuS: processes.reduce((sum, p) => sum + p.cpuS, 0),
  };
}

function usageLines(file: string): ProcessUsage[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as ProcessUsage);
}

/** Bytes under `dir`, as `du -sb` counts them (apparent sizes). */
export function diskBytes(dir: string): number {
  if (!existsSync(dir)) return 0;
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) total += diskBytes(full);
    else if (entry.isFile()) total += statSync(full).size;
  }
  return total;
}

/** The last lines of the command log, for a failure message. */
export function tail(file: string, lines = 30): string {
  return readFileSync(file, "utf8").split("\n").slice(-lines).join("\n");
}
