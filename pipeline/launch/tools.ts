// The scheduler's own command-line tools: found on PATH, or an error that says what to install.
import { execFile } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import { UserError } from "../errors.js";

const PACKAGES: Record<string, string> = {
  sbatch:
    "sbatch comes with Slurm's client commands: on Debian or Ubuntu `apt-get install slurm-client`, or SchedMD's upstream Slurm; run launch on a machine that can submit to your cluster (a login node)",
  kubectl:
    "kubectl comes with Debian's kubernetes-client package (`apt-get install kubernetes-client`) or the upstream kubectl release matching your cluster; it must be configured for the cluster (kubectl config current-context)",
};

export function findOnPath(tool: string, path = process.env.PATH ?? ""): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, tool);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {}
  }
  return undefined;
}

/** The absolute path of `tool`, or a UserError naming the package that provides it. */
export function requireTool(tool: "sbatch" | "kubectl", why: string): string {
  const found = findOnPath(tool);
  if (found) return found;
  throw new UserError(`${why} needs \`${tool}\`, which is not on PATH. ${PACKAGES[tool]}.`);
}

export interface ToolResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a tool to completion; a non-zero exit is returned, not thrown, so the caller can advise. */
export function runTool(
  file: string,
  args: string[],
  options: { cwd?: string; signal?: AbortSignal } = {},
): Promise<ToolResult> {
  return new Promise((done, fail) => {
    const settings = { cwd: options.cwd, maxBuffer: 64 << 20, signal: options.signal };
    execFile(file, args, settings, (error, stdout, stderr) => {
      if (error && typeof (error as NodeJS.ErrnoException).code === "string") return fail(error);
      done({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}
