// Tests that need something of the host (bubblewrap, a one-node Slurm, the paper's seed checked out
// beside the repo, a tmpfs mount) skip where it is missing; CI sets CODEFEEDBACK_REQUIRE_<NAME>=1 so there they fail.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Whether tests that need `name` run: yes when nothing is `missing`; no (a skip) when something is,
 * unless `CODEFEEDBACK_REQUIRE_<name>=1`, where it throws and fails the file.
 */
export function present(
  name: "SANDBOX" | "SEEDS" | "SLURM" | "TMPFS" | "CHROMIUM",
  missing: string | undefined,
): boolean {
  if (missing === undefined) return true;
  const variable = `CODEFEEDBACK_REQUIRE_${name}`;
  if (process.env[variable] === "1") throw new Error(`${variable}=1 but ${missing}`);
  return false;
}

/** The paper's seed 003 (its prompts) from ../shared/seeds beside the repo, or undefined. */
export function paperSeed(): string | undefined {
  const file = new URL("../../../shared/seeds/003_5d71fe4f6c147ddb.txt", import.meta.url);
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    present("SEEDS", `the seed cannot be read: ${(error as Error).message}`);
    return undefined;
  }
}

/** Why a tmpfs cannot be mounted here (it takes root), or undefined when one can. */
export function tmpfsProblem(): string | undefined {
  // not tempDir(): this module is also loaded by child processes the tests start, outside vitest
  const dir = mkdtempSync(join(tmpdir(), "cf-tmpfs-probe-"));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", dir], { stdio: "pipe" });
    execFileSync("umount", [dir], { stdio: "pipe" });
    return undefined;
  } catch (error) {
    return `cannot mount a tmpfs (it takes root): ${(error as Error).message.split("\n")[0]}`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
