// How a benchmark starts Node as `pnpm pipeline` starts it: the runtime flags of package.json's
// `pipeline` script, then tsx, from the repository's root, so a benchmark measures the code as users
// run it (bench/run.ts for each benchmark, bench/e2e/ for each pipeline command and the sandbox server).
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The repository's root: the working dir of every process started with `nodeArgs`. */
export const REPO_ROOT = fileURLToPath(new URL("..", import.meta.url));

/** The node flags of `scripts.pipeline` in package.json: every `--flag` before `--import`. */
function pipelineNodeFlags(packageJson: string): string[] {
  const script: string = JSON.parse(packageJson).scripts?.pipeline ?? "";
  const words = script.trim().split(/\s+/);
  if (words[0] !== "node") return [];
  const flags: string[] = [];
  for (const word of words.slice(1)) {
    if (word === "--import") break;
    flags.push(word);
  }
  return flags;
}

/** Node's arguments to run `script` (relative to REPO_ROOT) with `args` as `pnpm pipeline` runs its own. */
export function nodeArgs(script: string, args: readonly string[] = []): string[] {
  const flags = pipelineNodeFlags(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8"));
  return [...flags, "--import", "tsx", script, ...args];
}

/** Node's arguments for `pnpm pipeline ...args`. */
export function pipelineArgs(args: readonly string[]): string[] {
  return nodeArgs("pipeline/main.ts", args);
}
