// The host-side scratch area of an embedded sandbox: one dir per worker slot holding that slot's
// synthetic /etc files and the run dirs of its requests. When we are root each slot's runs live on
// their own size-capped tmpfs, so a program that fills its work dir hits ENOSPC instead of filling
// the host disk; otherwise RLIMIT_FSIZE bounds each file and the run timeout bounds the rest.
import { execFile } from "node:child_process";
import { chmod, chown, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { type SyntheticEtc, syntheticEtcContents } from "./isolation.js";

const run = promisify(execFile);

export interface SlotArea {
  index: number;
  /** host uid/gid of untrusted code in this slot */
  uid: number;
  /** where this slot's run dirs are created */
  runsDir: string;
  /** where the wrapper's usage reports go (not on the runs tmpfs, which a program may fill) */
  metaDir: string;
  etc: SyntheticEtc;
  /** whether runsDir is a private tmpfs we mounted (and must unmount) */
  mounted: boolean;
}

export interface HostArea {
  base: string;
  slots: SlotArea[];
}

export function isRoot(): boolean {
  return process.getuid?.() === 0;
}

async function mountTmpfs(dir: string, sizeMb: number): Promise<boolean> {
  try {
    await run("/usr/bin/mount", [
      "-t",
      "tmpfs",
      "-o",
      `size=${sizeMb}m,mode=0711,nosuid,nodev`,
      "codefeedback-sandbox",
      dir,
    ]);
    return true;
  } catch {
    return false;
  }
}

export async function createHostArea(options: {
  slots: number;
  uidBase: number;
  workDirMb: number;
  /** mount a tmpfs per slot (only attempted as root) */
  tmpfs: boolean;
}): Promise<HostArea> {
  const base = await mkdtemp(join(tmpdir(), "codefeedback-sandbox-"));
  // Unprivileged bwrap (userns mode) must traverse to the run dirs it binds; nobody may list them.
  await chmod(base, 0o711);
  const root = isRoot();
  const slots: SlotArea[] = [];
  for (let index = 0; index < options.slots; index++) {
    const uid = root ? options.uidBase + index : (process.getuid?.() ?? 0);
    const dir = join(base, `slot-${index}`);
    await mkdir(dir, { mode: 0o711 });
    const etcDir = join(dir, "etc");
    await mkdir(etcDir, { mode: 0o755 });
    const contents = syntheticEtcContents(uid);
    const etc = {} as SyntheticEtc;
    for (const [key, text] of Object.entries(contents) as [keyof SyntheticEtc, string][]) {
      const path = join(etcDir, key);
      await writeFile(path, text, { mode: 0o644 });
      etc[key] = path;
    }
    const metaDir = join(dir, "meta");
    await mkdir(metaDir, { mode: 0o711 });
    const runsDir = join(dir, "runs");
    await mkdir(runsDir, { mode: 0o711 });
    const mounted = root && options.tmpfs ? await mountTmpfs(runsDir, options.workDirMb) : false;
    if (root) await chown(runsDir, 0, 0);
    slots.push({ index, uid, runsDir, metaDir, etc, mounted });
  }
  return { base, slots };
}

export async function removeHostArea(area: HostArea): Promise<void> {
  for (const slot of area.slots) {
    if (slot.mounted) await run("/usr/bin/umount", ["-l", slot.runsDir]).catch(() => {});
  }
  await rm(area.base, { recursive: true, force: true }).catch(() => {});
}
