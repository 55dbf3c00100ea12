// The host-side scratch area of an embedded sandbox: the /etc view all its sandboxes mount, and one
// dir per worker slot holding the run dirs of that slot's requests. When we are root each slot's runs live on
// their own size-capped tmpfs, so a program that fills its work dir hits ENOSPC instead of filling
// the host disk; otherwise RLIMIT_FSIZE bounds each file and the run timeout bounds the rest.
import { execFile } from "node:child_process";
import { lstatSync } from "node:fs";
import { chmod, chown, copyFile, link, mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { promisify } from "node:util";
import { processAlive } from "../pid.js";
import { buildEtcView } from "./etc-view.js";
import { GO_CACHE_INSIDE, goCacheRoot, warmGoCache } from "./go-cache.js";
import { LAUNCHER_INSIDE, type SandboxKit, TOOLS_DIR } from "./isolation.js";
import { helperBinary, stagedTool } from "./launcher.js";
import { sandboxSeccompFilter } from "./seccomp.js";
import { toolchainPaths } from "./toolchains.js";
import { claimUids, releaseUids } from "./uid-claims.js";

const run = promisify(execFile);

export interface SlotArea {
  index: number;
  /** host uid/gid of untrusted code in this slot */
  uid: number;
  /** where this slot's run dirs are created */
  runsDir: string;
  /**
   * where the wrapper reports resource usage; off the runs tmpfs, which a program may fill, and
   * emptied before every command since runs in a slot follow one another
   */
  usageFile: string;
  /** whether runsDir is a private tmpfs we mounted (and must unmount) */
  mounted: boolean;
}

export interface HostArea {
  base: string;
  /** the /etc view, launcher and seccomp filter every sandbox of this area uses */
  kit: SandboxKit;
  slots: SlotArea[];
}

const AREA_PREFIX = "codefeedback-sandbox-";

/**
 * Areas left by sandboxes whose process died without closing them (kill -9): their tmpfs mounts
 * would otherwise pile up, and every new sandbox's mount namespace copies the whole mount table.
 */
async function removeStaleAreas(): Promise<void> {
  const entries = await readdir(tmpdir()).catch(() => [] as string[]);
  for (const entry of entries) {
    const owner = new RegExp(`^${AREA_PREFIX}(\\d+)-`).exec(entry);
    if (!owner || processAlive(Number(owner[1]))) continue;
    const base = join(tmpdir(), entry);
    const stat = lstatSync(base, { throwIfNoEntry: false });
    if (!stat?.isDirectory() || stat.uid !== (process.getuid?.() ?? stat.uid)) continue;
    for (const slot of await readdir(base).catch(() => [] as string[])) {
      if (slot.startsWith("slot-"))
        await run("/usr/bin/umount", ["-l", join(base, slot, "runs")]).catch(() => {});
    }
    await rm(base, { recursive: true, force: true }).catch(() => {});
  }
}

export function isRoot(): boolean {
  return process.getuid?.() === 0;
}

/** Mounts a size-capped tmpfs at `dir`; false where it cannot. */
function mountTmpfs(dir: string, sizeMb: number): Promise<boolean> {
  // inodes cost kernel memory that size= does not count: bound them too (64 per MiB)
  const options = `size=${sizeMb}m,nr_inodes=${Math.max(4096, sizeMb * 64)},mode=0711,nosuid,nodev`;
  const mounted = run("/usr/bin/mount", ["-t", "tmpfs", "-o", options, "codefeedback-sandbox", dir]);
  return mounted.then(
    () => true,
    () => false,
  );
}

export async function createHostArea(options: {
  slots: number;
  uidBase: number;
  workDirMb: number;
  /** mount a tmpfs per slot (only attempted as root) */
  tmpfs: boolean;
  /** build and use our launcher and enter helper (false: setpriv + prlimit + GNU time, a shell) */
  launcher: boolean;
}): Promise<HostArea> {
  await removeStaleAreas();
  const base = await mkdtemp(join(tmpdir(), `${AREA_PREFIX}${process.pid}-`));
  // Unprivileged bwrap (userns mode) must traverse to the run dirs it binds; nobody may list them.
  await chmod(base, 0o711);
  const root = isRoot();
  const uids = root ? claimUids(options.uidBase, options.slots) : [];
  const slots: SlotArea[] = [];
  for (let index = 0; index < options.slots; index++) {
    const uid = root ? uids[index]! : (process.getuid?.() ?? 0);
    const dir = join(base, `slot-${index}`);
    await mkdir(dir, { mode: 0o711 });
    const metaDir = join(dir, "meta");
    await mkdir(metaDir, { mode: 0o711 });
    const usageFile = join(metaDir, "usage");
    await writeFile(usageFile, "", { mode: 0o600 });
    if (root) await chown(usageFile, uid, uid);
    const runsDir = join(dir, "runs");
    await mkdir(runsDir, { mode: 0o711 });
    const mounted = root && options.tmpfs ? await mountTmpfs(runsDir, options.workDirMb) : false;
    if (root) await chown(runsDir, 0, 0);
    slots.push({ index, uid, runsDir, usageFile, mounted });
  }
  const etcDir = join(base, "etc");
  await buildEtcView(
    etcDir,
    slots.map((slot) => slot.uid),
  );
  const filter = sandboxSeccompFilter();
  let seccompFile: string | null = null;
  if (filter) {
    seccompFile = join(base, "seccomp.bpf");
    await writeFile(seccompFile, filter, { mode: 0o600 });
  }
  const launcher = options.launcher ? await helperBinary("launch") : null;
  const enter = options.launcher ? await helperBinary("enter") : null;
  const spawner = options.launcher ? await helperBinary("spawn") : null;
  const tools: [string, string][] = [];
  for (const [host, inside] of toolchainPaths().binds) tools.push([await stagedTool(host), inside]);
  if (launcher) tools.push([launcher, LAUNCHER_INSIDE]);
  const goCache = await goCacheRoot();
  const toolBinds = await buildToolsView(join(base, "tools"), tools, goCache !== null);
  if (goCache) {
    toolBinds.push([goCache, GO_CACHE_INSIDE]);
    // built in the background: a Go request that comes first waits for it (run-request.ts)
    void warmGoCache();
  }
  return { base, kit: { etcDir, launcher, seccompFile, toolBinds, enter, spawner }, slots };
}

/**
 * One dir holding every tool file at its name under TOOLS_DIR (hard links, copies across file
 * systems), mounted whole: bwrap re-reads the mount table for each bind it makes, so one bind
 * instead of one per tool is less work per sandbox. With a mount point for the Go cache.
 */
async function buildToolsView(
  dir: string,
  tools: readonly [string, string][],
  goCache: boolean,
): Promise<[string, string][]> {
  if (tools.length === 0) return [];
  await mkdir(dir, { mode: 0o755 });
  for (const [host, inside] of tools) {
    if (dirname(inside) !== TOOLS_DIR) throw new Error(`a sandbox tool outside ${TOOLS_DIR}: ${inside}`);
    const file = join(dir, basename(inside));
    await link(host, file).catch(() => copyFile(host, file));
  }
  if (goCache) await mkdir(join(dir, basename(GO_CACHE_INSIDE)), { mode: 0o755 });
  return [[dir, TOOLS_DIR]];
}

export async function removeHostArea(area: HostArea): Promise<void> {
  if (isRoot()) releaseUids(area.slots.map((slot) => slot.uid));
  for (const slot of area.slots) {
    if (slot.mounted) await run("/usr/bin/umount", ["-l", slot.runsDir]).catch(() => {});
  }
  await rm(area.base, { recursive: true, force: true }).catch(() => {});
}

/**
 * Packets the run's network namespace refused (no route, or a lookup sent to a resolver that is not
 * there), as our launcher reports them in its usage report; null when it did not (GNU time, or a
 * garbled report).
 */
export function networkRefusalsOf(report: string): number | null {
  const found = /^network (\d{1,12})$/m.exec(report);
  return found ? Number(found[1]) : null;
}

/** Peak resident memory in KiB from a usage report (its last line), or null when missing or garbled. */
export function peakMemoryKbOf(report: string): number | null {
  const last = report.trim().split("\n").pop() ?? "";
  return /^\d{1,12}$/.test(last) ? Number(last) : null;
}
