// How one command is wrapped so untrusted code cannot reach the host: a fresh bubblewrap sandbox with
// its own user, PID, network, IPC, UTS and cgroup namespaces, a read-only /usr (/usr/local masked), a
// whitelisted /etc, private size-capped /tmp and /dev/shm, the run's work dir as its only writable
// host path, a seccomp filter, a fresh environment, and rlimits set by our launcher (launcher.c;
// where it cannot be built, setpriv + prlimit + GNU time) just before the program starts.
import { lstatSync, readlinkSync } from "node:fs";

/**
 * Two ways to get an unprivileged uid (the kernel exempts root from RLIMIT_NPROC, so a fork bomb run
 * as root is unbounded):
 *   userns  - bwrap itself is started as an unprivileged uid (uid_base + worker when we are root, our
 *             own uid otherwise) and creates a user namespace; needs unprivileged user namespaces.
 *   setuid  - we are root and user namespaces are off: bwrap runs as root without one and the
 *             launcher drops to uid_base + worker, with no capabilities and no_new_privs.
 */
export type IsolationMode = "userns" | "setuid" | "none";

/** rlimits applied to the untrusted process tree; `null` leaves one unlimited */
export interface ProcessLimits {
  cpuSeconds: number;
  addressSpaceMb: number | null;
  processes: number;
  fileSizeMb: number;
  openFiles: number;
}

/** What a command runs: known only when its request arrives (sent as orders to a prepared sandbox). */
export interface CommandOrders {
  /** the program and its arguments, as seen inside the sandbox */
  argv: string[];
  /** the complete environment of the program (nothing is inherited) */
  env: Record<string, string>;
  limits: ProcessLimits;
}

/** The sandbox a command runs in: its mounts and its uid, which a prepared sandbox fixes ahead. */
export interface SandboxShape {
  /** host dir mounted read-write at WORK_DIR */
  hostWorkDir: string;
  /**
   * host file, writable by `uid`, where the launcher writes resource usage (mounted at USAGE_PATH);
   * null where our launcher reports on a pipe, so the program gets no host file to write at all
   */
  hostUsageFile: string | null;
  /** size of the private /tmp and /dev/shm, MiB */
  tmpMb: number;
  /** host uid/gid the program runs as (ignored when we are not root) */
  uid: number;
  /** extra host files or dirs to expose read-only: [host path, path inside] */
  readOnlyBinds: [string, string][];
}

export interface SandboxedCommand extends CommandOrders, SandboxShape {}

/** Host-side pieces prepared once per sandbox instance. */
export interface SandboxKit {
  /** the /etc view (etc-view.ts) */
  etcDir: string;
  /** our launcher binary, or null to use setpriv + prlimit + GNU time */
  launcher: string | null;
  /** a file holding the compiled seccomp filter, or null where we have none for this architecture */
  seccompFile: string | null;
  /**
   * tools outside /usr (esbuild, node) as [host path, path inside], mounted for commands naming a path
   * under one: a dir at TOOLS_DIR holds them all with the launcher, the Go cache is mounted in it
   */
  toolBinds: [string, string][];
  /** our cgroup-entering helper (enter.c), or null to do the same with a shell and setpriv */
  enter: string | null;
  /** our spawner (spawner.c), which forks commands for us, or null to fork them ourselves */
  spawner: string | null;
}

/** What to spawn on the host for one command. */
export interface HostCommand {
  file: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  uid?: number;
  gid?: number;
  /** a file whose content the child reads on fd 3 (bwrap's --seccomp) */
  fd3File?: string;
  /** a prepared command: it reads its orders on fd 4 and reports on fd 5 (pipes to and from us) */
  controlFd?: boolean;
  /** its launcher writes its usage report on fd 5 (a pipe to us), with no orders on fd 4 */
  reportFd?: boolean;
  /** our spawner binary, to start it through (see spawner.ts); else Node forks it */
  spawner?: string;
}

export const WORK_DIR = "/work";
/**
 * A second writable dir of the run, at SandboxFusion's /mnt (its tests write /mnt/data/x): the host
 * dir beside the work dir (hostMntDir), bound where the run dir has one.
 */
export const MNT_DIR = "/mnt";

export function hostMntDir(hostWorkDir: string): string {
  return `${hostWorkDir}-mnt`;
}
export const USAGE_PATH = "/run/sandbox-usage";
/** where the launcher's report goes when nobody reads it */
const NO_USAGE = "/dev/null";
/** where the sandbox sees our launcher and the tools outside /usr (SandboxKit.toolBinds) */
export const TOOLS_DIR = "/opt/sandbox-tools";
export const LAUNCHER_INSIDE = `${TOOLS_DIR}/launch`;
/** The host's tools a sandbox may need (which, the isolation probe checks) */
export const SANDBOX_TOOLS = {
  bwrap: "/usr/bin/bwrap",
  prlimit: "/usr/bin/prlimit",
  setpriv: "/usr/bin/setpriv",
  time: "/usr/bin/time",
  shell: "/bin/sh",
  bash: "/bin/bash",
};
/**
 * Closes every descriptor above stderr, then runs the program: bwrap and the stock tools pass on
 * whatever the pipeline's process inherited without close-on-exec (our launcher closes them itself).
 */
const CLOSE_INHERITED_SCRIPT =
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, not a template
  'for f in /proc/$$/fd/*; do n=${f##*/}; [ "$n" -gt 2 ] && eval "exec $n>&-"; done; exec "$@"';

/** The top-level links of a merged-/usr system (/bin -> usr/bin, ...), mirrored inside. */
const ROOT_LINKS = ["bin", "sbin", "lib", "lib32", "lib64", "libx32"];

function rootLayout(): string[] {
  const args: string[] = [];
  for (const name of ROOT_LINKS) {
    const host = `/${name}`;
    const stat = lstatSync(host, { throwIfNoEntry: false });
    if (stat?.isSymbolicLink()) args.push("--symlink", readlinkSync(host), host);
    else if (stat?.isDirectory()) args.push("--ro-bind", host, host);
  }
  return args;
}

let cachedLayout: string[] | null = null;

const MIB = 1024 * 1024;

/** The rlimits as our launcher takes them: CPU seconds, then bytes and counts (-1: unlimited). */
function launcherLimits(limits: ProcessLimits): string[] {
  return [
    String(Math.max(1, Math.ceil(limits.cpuSeconds))),
    String(limits.addressSpaceMb === null ? -1 : limits.addressSpaceMb * MIB),
    String(limits.processes),
    String(limits.fileSizeMb * MIB),
    String(limits.openFiles),
  ];
}

/**
 * `argv` under its rlimits, dropped to `uid` where one is given, reporting usage to `usageFile`: through
 * our launcher, or without it the same job with util-linux and GNU time (one exec each).
 */
function limitedArgs(
  launcher: string | null,
  usageFile: string,
  uid: number | null,
  limits: ProcessLimits,
  argv: string[],
) {
  if (launcher) return [launcher, usageFile, String(uid ?? -1), ...launcherLimits(limits), "--", ...argv];
  const args = [SANDBOX_TOOLS.time, "-q", "-f", "%M", "-o", usageFile];
  if (uid !== null) {
    args.push(
      SANDBOX_TOOLS.setpriv,
      `--reuid=${uid}`,
      `--regid=${uid}`,
      "--clear-groups",
      "--no-new-privs",
      "--bounding-set=-all",
      "--inh-caps=-all",
      "--",
    );
  }
  args.push(
    SANDBOX_TOOLS.prlimit,
    `--cpu=${Math.max(1, Math.ceil(limits.cpuSeconds))}`,
    `--nproc=${limits.processes}`,
    `--fsize=${limits.fileSizeMb * MIB}`,
    `--nofile=${limits.openFiles}`,
    "--core=0",
  );
  if (limits.addressSpaceMb !== null) args.push(`--as=${limits.addressSpaceMb * MIB}`);
  args.push("--", SANDBOX_TOOLS.bash, "-c", CLOSE_INHERITED_SCRIPT, "close-inherited", ...argv);
  return args;
}

/** bwrap's options for a sandbox of `shape` under `mode`, up to (not including) the command. */
function bwrapOptions(mode: Exclude<IsolationMode, "none">, shape: SandboxShape, kit: SandboxKit): string[] {
  cachedLayout ??= rootLayout();
  const tmpBytes = String(shape.tmpMb * MIB);
  const args: string[] = [];
  if (mode === "userns") {
    args.push("--unshare-user");
    // without our seccomp filter (which refuses new namespaces), bwrap must forbid nested ones
    if (!kit.seccompFile) args.push("--disable-userns");
  }
  args.push(
    "--unshare-pid",
    "--unshare-net",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    "--hostname",
    "sandbox",
    "--die-with-parent",
    "--new-session",
    "--ro-bind",
    "/usr",
    "/usr",
    "--ro-bind",
    kit.etcDir,
    "/etc",
    // /usr/local holds whatever the host admin installed (other interpreters, tools, secrets)
    "--perms",
    "0555",
    "--size",
    "4096",
    "--tmpfs",
    "/usr/local",
    ...cachedLayout,
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    "--perms",
    "1777",
    "--size",
    tmpBytes,
    "--tmpfs",
    "/tmp",
    "--perms",
    "1777",
    "--size",
    tmpBytes,
    "--tmpfs",
    "/dev/shm",
    "--bind",
    shape.hostWorkDir,
    WORK_DIR,
    "--bind-try",
    hostMntDir(shape.hostWorkDir),
    MNT_DIR,
  );
  // bwrap would create mount-point parents 0700 when it runs as root
  args.push("--perms", "0755", "--dir", "/run");
  if (shape.hostUsageFile !== null) {
    // a file mount: the program may scribble on it but cannot swap it for a link (GNU time's
    // fallback only: our launcher reports on a pipe)
    args.push("--bind", shape.hostUsageFile, USAGE_PATH);
  }
  const binds: [string, string][] = [...shape.readOnlyBinds];
  // the tools dir holds the launcher (host-area.ts); a command naming no tool gets the launcher alone
  if (kit.launcher && !binds.some(([, inside]) => inside === TOOLS_DIR))
    binds.push([kit.launcher, LAUNCHER_INSIDE]);
  if (binds.length > 0) args.push("--perms", "0755", "--dir", "/opt", "--perms", "0755", "--dir", TOOLS_DIR);
  for (const [host, inside] of binds) args.push("--ro-bind", host, inside);
  args.push("--remount-ro", "/", "--chdir", WORK_DIR, "--clearenv");
  if (kit.seccompFile) args.push("--seccomp", "3");
  return args;
}

function hostBwrap(
  mode: Exclude<IsolationMode, "none">,
  shape: SandboxShape,
  kit: SandboxKit,
  args: string[],
) {
  const host: HostCommand = { file: SANDBOX_TOOLS.bwrap, args, env: { PATH: "/usr/bin:/bin" }, cwd: "/" };
  if (kit.seccompFile) host.fd3File = kit.seccompFile;
  if (kit.spawner) host.spawner = kit.spawner;
  if (mode === "userns" && process.getuid?.() === 0) {
    host.uid = shape.uid;
    host.gid = shape.uid;
  }
  return host;
}

/** The bwrap command line for `command` under `mode`. */
export function wrapInSandbox(
  mode: Exclude<IsolationMode, "none">,
  command: SandboxedCommand,
  kit: SandboxKit,
): HostCommand {
  const args = bwrapOptions(mode, command, kit);
  for (const [key, value] of Object.entries(command.env)) args.push("--setenv", key, value);
  const dropTo = mode === "setuid" ? command.uid : null;
  // no usage file: our launcher reports on fd 5, out of the program's reach
  const onPipe = kit.launcher !== null && command.hostUsageFile === null;
  const usage = onPipe ? "-" : command.hostUsageFile === null ? NO_USAGE : USAGE_PATH;
  const launcher = kit.launcher && LAUNCHER_INSIDE;
  args.push("--", ...limitedArgs(launcher, usage, dropTo, command.limits, command.argv));
  const host = hostBwrap(mode, command, kit, args);
  if (onPipe) host.reportFd = true;
  return host;
}

/**
 * A sandbox of `shape` made before its command is known: bwrap builds it at once and our launcher
 * waits inside, already unprivileged, for `prepareOrders` on fd 4. Needs our launcher.
 */
export function prepareSandbox(
  mode: Exclude<IsolationMode, "none">,
  shape: SandboxShape,
  kit: SandboxKit & { launcher: string },
): HostCommand {
  const args = bwrapOptions(mode, shape, kit);
  const dropTo = mode === "setuid" ? shape.uid : -1;
  // "-": the launcher reports usage on fd 5 after the program, so no usage file is mounted
  args.push("--", LAUNCHER_INSIDE, "--wait", shape.hostUsageFile === null ? "-" : USAGE_PATH, String(dropTo));
  return { ...hostBwrap(mode, shape, kit, args), controlFd: true };
}

/** The orders for a prepared sandbox's launcher: limits, then argv and environment, NUL-terminated. */
export function prepareOrders(orders: CommandOrders): Buffer {
  const { limits, argv, env } = orders;
  const environment = Object.entries(env).map(([key, value]) => `${key}=${value}`);
  const fields = [
    ...launcherLimits(limits),
    String(argv.length),
    ...argv,
    String(environment.length),
    ...environment,
  ];
  if (fields.some((field) => field.includes("\0"))) throw new Error("a command argument contains a NUL byte");
  return Buffer.from(fields.map((field) => `${field}\0`).join(""));
}

/**
 * `isolation: none`: the program runs on the host as this user, in the work dir, with the same
 * scratch environment and rlimits but none of the namespaces. For trusted code only.
 */
export function runUnisolated(
  command: SandboxedCommand,
  hostTmpDir: string | null,
  kit: Pick<SandboxKit, "launcher" | "spawner">,
): HostCommand {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(command.env)) {
    env[key] = hostTmpDir && value.startsWith("/tmp") ? hostTmpDir + value.slice(4) : value;
  }
  const usage = command.hostUsageFile ?? NO_USAGE;
  const [file, ...args] = limitedArgs(kit.launcher, usage, null, command.limits, command.argv);
  const host: HostCommand = { file: file!, args, env, cwd: command.hostWorkDir };
  if (kit.spawner) host.spawner = kit.spawner;
  return host;
}

/** Moves the first process into the run's cgroups, then drops to the run's uid. */
const ENTER_SCRIPT =
  'while [ "$1" != -- ]; do echo 0 > "$1" || exit 125; shift; done; shift; echo 1000 > /proc/self/oom_score_adj; exec "$@"';

/**
 * `host`, started inside the run's cgroups (`procsFiles`): a helper joins them and then execs the
 * command, so bubblewrap and all it forks are counted from the start. The helper runs as us and takes
 * over the drop to the command's uid, since joining a cgroup we own needs our privileges.
 */
export function enterCgroups(
  host: HostCommand,
  procsFiles: readonly string[],
  kit: Pick<SandboxKit, "enter">,
): HostCommand {
  const uid = host.uid ?? -1;
  const entered: HostCommand = { ...host };
  delete entered.uid;
  delete entered.gid;
  if (kit.enter) {
    entered.file = kit.enter;
    entered.args = [String(uid), ...procsFiles, "--", host.file, ...host.args];
  } else {
    const drop =
      uid >= 0 ? [SANDBOX_TOOLS.setpriv, `--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", "--"] : [];
    entered.file = SANDBOX_TOOLS.shell;
    entered.args = [
      "-c",
      ENTER_SCRIPT,
      "sandbox-enter",
      ...procsFiles,
      "--",
      ...drop,
      host.file,
      ...host.args,
    ];
  }
  return entered;
}
