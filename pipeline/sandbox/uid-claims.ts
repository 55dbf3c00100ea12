// Host uids for untrusted code, claimed per sandbox instance. In setuid mode the kernel counts
// RLIMIT_NPROC per host uid, so two sandboxes on one machine (two pipeline runs, parallel test
// files) sharing a uid would share one process budget; each instance therefore claims uids of its own,
// starting at `uid_base`, with a claim file naming its pid. Claims of dead processes are taken over.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { processAlive } from "../pid.js";
import { ours } from "./launcher.js";

const CLAIM_RANGE = 4096;

function claimDir(): string | null {
  const dir = join(tmpdir(), "codefeedback-sandbox-uids");
  try {
    mkdirSync(dir, { mode: 0o755 });
  } catch {
    // already there
  }
  // only a dir of ours that nobody else can write holds trustworthy claims
  return ours(dir, "dir") ? dir : null;
}

function tryClaim(path: string): boolean {
  try {
    writeFileSync(path, String(process.pid), { flag: "wx", mode: 0o644 });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") return false;
  }
  const owner = Number(readFileSync(path, "utf8").trim());
  if (Number.isInteger(owner) && owner > 0 && processAlive(owner)) return false;
  rmSync(path, { force: true });
  return tryClaim(path);
}

/** `count` uids from `base` upwards that no live sandbox holds; falls back to base.. when claims cannot be kept. */
export function claimUids(base: number, count: number): number[] {
  const dir = claimDir();
  if (!dir) return Array.from({ length: count }, (_, i) => base + i);
  const claimed: number[] = [];
  for (let uid = base; uid < base + CLAIM_RANGE && claimed.length < count; uid++) {
    if (tryClaim(join(dir, String(uid)))) claimed.push(uid);
  }
  for (let uid = base; claimed.length < count; uid++) if (!claimed.includes(uid)) claimed.push(uid);
  return claimed;
}

export function releaseUids(uids: readonly number[]): void {
  const dir = claimDir();
  if (!dir) return;
  for (const uid of uids) {
    const path = join(dir, String(uid));
    try {
      if (Number(readFileSync(path, "utf8").trim()) === process.pid) rmSync(path, { force: true });
    } catch {
      // not ours, or gone
    }
  }
}
