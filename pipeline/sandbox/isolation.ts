// How one command is wrapped so untrusted code cannot reach the host: a fresh bubblewrap sandbox with
// its own user, PID, network, IPC and UTS namespaces, a read-only /usr, a whitelisted /etc, private
// size-capped /tmp and /dev/shm, the run's work dir as its only writable host path, an environment
// built from scratch, and rlimits set by prlimit just before the program starts.
//
// Two ways to get an unprivileged uid (the kernel exempts root from RLIMIT_NPROC, so a fork bomb run
// as root is unbounded):
//   userns  - bwrap itself is started as an unprivileged uid (uid_base + worker when we are root, our
//             own uid otherwise) and creates a user namespace; needs unprivileged user namespaces.
//   setuid  - we are root and user namespaces are off: bwrap runs as root without one and setpriv
//             drops to uid_base + worker, with no capabilities and no_new_privs, before the program.
import { existsSync, lstatSync, readlinkSync } from "node:fs";
import { sandboxSeccompFilter } from "./seccomp.js";

export type IsolationMode = "userns" | "setuid" | "none";

/** rlimits applied to the untrusted process tree; `null` leaves one unlimited */
export interface ProcessLimits {
  cpuSeconds: number;
  addressSpaceMb: number | null;
  processes: number;
  fileSizeMb: number;
  openFiles: number;
}

export interface SandboxedCommand {
  /** the program and its arguments, as seen inside the sandbox */
  argv: string[];
  /** the complete environment of the program (nothing is inherited) */
  env: Record<string, string>;
  limits: ProcessLimits;
  /** host dir mounted read-write at WORK_DIR */
  hostWorkDir: string;
  /** host dir, writable by `uid`, where resource usage is written (mounted at META_DIR) */
  hostMetaDir: string;
  /** size of the private /tmp and /dev/shm, MiB */
  tmpMb: number;
  /** host uid/gid the program runs as (ignored when we are not root) */
  uid: number;
  /** extra host files or dirs to expose read-only: [host path, path inside] */
  readOnlyBinds: [string, string][];
}

/** What to spawn on the host for one command. */
export interface HostCommand {
  file: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  uid?: number;
  gid?: number;
  /** bytes to feed the child on fd 3 (bwrap reads its seccomp filter there) */
  fd3?: Buffer;
}

export const WORK_DIR = "/work";
export const META_DIR = "/run/sandbox-meta";
export const USAGE_FILE = "usage";
const BWRAP = "/usr/bin/bwrap";
const PRLIMIT = "/usr/bin/prlimit";
const SETPRIV = "/usr/bin/setpriv";
const GNU_TIME = "/usr/bin/time";

/** /etc entries toolchains read; everything else in /etc (keys, tokens, npmrc, pip.conf) stays hidden. */
const ETC_WHITELIST = [
  "alternatives",
  "ld.so.cache",
  "ld.so.conf",
  "ld.so.conf.d",
  "localtime",
  "timezone",
  "ssl",
  "mime.types",
  "nsswitch.conf",
  "host.conf",
  "gai.conf",
  "protocols",
  "services",
  "os-release",
  "debian_version",
  "terminfo",
  "java-17-openjdk",
  "java-21-openjdk",
  "mono",
  "R",
  "php",
  "perl",
  "python3",
  "python3.11",
  "fonts",
  "papersize",
  "libpaper.d",
  "ruby",
];

/** The top-level links of a merged-/usr system (/bin -> usr/bin, ...), mirrored inside. */
const ROOT_LINKS = ["bin", "sbin", "lib", "lib32", "lib64", "libx32"];

function rootLayout(): string[] {
  const args: string[] = [];
  for (const name of ROOT_LINKS) {
    const host = `/${name}`;
    let stat: ReturnType<typeof lstatSync>;
    try {
      stat = lstatSync(host);
    } catch {
      continue;
    }
    if (stat.isSymbolicLink()) args.push("--symlink", readlinkSync(host), host);
    else if (stat.isDirectory()) args.push("--ro-bind", host, host);
  }
  for (const name of ETC_WHITELIST) {
    const host = `/etc/${name}`;
    if (existsSync(host)) args.push("--ro-bind", host, host);
  }
  return args;
}

let cachedLayout: string[] | null = null;

/** Files of /etc we write ourselves so no host account, host name or resolver leaks in. */
export interface SyntheticEtc {
  passwd: string;
  group: string;
  hosts: string;
  hostname: string;
  resolvConf: string;
}

export function syntheticEtcContents(uid: number): Record<keyof SyntheticEtc, string> {
  return {
    passwd: `root:x:0:0:root:/root:/usr/sbin/nologin\nsandbox:x:${uid}:${uid}:sandbox:/tmp:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`,
    group: `root:x:0:\nsandbox:x:${uid}:\nnogroup:x:65534:\n`,
    hosts: "127.0.0.1 localhost sandbox\n::1 localhost ip6-localhost ip6-loopback\n",
    hostname: "sandbox\n",
    resolvConf: "",
  };
}

function limitArgs(limits: ProcessLimits): string[] {
  const mib = (mb: number) => String(mb * 1024 * 1024);
  const args = [
    `--cpu=${Math.max(1, Math.ceil(limits.cpuSeconds))}`,
    `--nproc=${limits.processes}`,
    `--fsize=${mib(limits.fileSizeMb)}`,
    `--nofile=${limits.openFiles}`,
    "--core=0",
  ];
  if (limits.addressSpaceMb !== null) args.push(`--as=${mib(limits.addressSpaceMb)}`);
  return args;
}

/**
 * The bwrap command line for `command` under `mode`. `etcFiles` are host paths of the synthetic
 * passwd/group/hosts/hostname/resolv.conf for this uid.
 */
export function wrapInSandbox(
  mode: Exclude<IsolationMode, "none">,
  command: SandboxedCommand,
  etcFiles: SyntheticEtc,
): HostCommand {
  cachedLayout ??= rootLayout();
  const tmpBytes = String(command.tmpMb * 1024 * 1024);
  const args: string[] = [];
  if (mode === "userns") args.push("--unshare-user", "--disable-userns");
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
    // bwrap would create these mount-point parents 0700 when it runs as root
    "--perms",
    "0755",
    "--dir",
    "/etc",
    "--perms",
    "0755",
    "--dir",
    "/opt",
    "--perms",
    "0755",
    "--dir",
    "/opt/sandbox-tools",
    "--perms",
    "0755",
    "--dir",
    "/run",
    // /usr/local holds whatever the host admin installed (other interpreters, tools, secrets)
    "--perms",
    "0555",
    "--size",
    "4096",
    "--tmpfs",
    "/usr/local",
    ...cachedLayout,
    "--ro-bind",
    etcFiles.passwd,
    "/etc/passwd",
    "--ro-bind",
    etcFiles.group,
    "/etc/group",
    "--ro-bind",
    etcFiles.hosts,
    "/etc/hosts",
    "--ro-bind",
    etcFiles.hostname,
    "/etc/hostname",
    "--ro-bind",
    etcFiles.resolvConf,
    "/etc/resolv.conf",
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
    command.hostWorkDir,
    WORK_DIR,
    "--bind",
    command.hostMetaDir,
    META_DIR,
  );
  for (const [host, inside] of command.readOnlyBinds) args.push("--ro-bind", host, inside);
  args.push("--remount-ro", "/", "--chdir", WORK_DIR, "--clearenv");
  const filter = sandboxSeccompFilter();
  if (filter) args.push("--seccomp", "3");
  for (const [key, value] of Object.entries(command.env)) args.push("--setenv", key, value);
  args.push("--", GNU_TIME, "-q", "-f", "%M", "-o", `${META_DIR}/${USAGE_FILE}`);
  if (mode === "setuid") {
    args.push(
      SETPRIV,
      `--reuid=${command.uid}`,
      `--regid=${command.uid}`,
      "--clear-groups",
      "--no-new-privs",
      "--bounding-set=-all",
      "--inh-caps=-all",
      "--",
    );
  }
  args.push(PRLIMIT, ...limitArgs(command.limits), "--", ...command.argv);
  const asRoot = process.getuid?.() === 0;
  const host: HostCommand = { file: BWRAP, args, env: { PATH: "/usr/bin:/bin" }, cwd: "/" };
  if (filter) host.fd3 = filter;
  if (mode === "userns" && asRoot) {
    host.uid = command.uid;
    host.gid = command.uid;
  }
  return host;
}

/**
 * `isolation: none`: the program runs on the host as this user, in the work dir, with the same
 * scratch environment and rlimits but none of the namespaces. For trusted code only.
 */
export function runUnisolated(command: SandboxedCommand, hostTmpDir: string): HostCommand {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(command.env)) {
    env[key] = value.startsWith("/tmp") ? hostTmpDir + value.slice(4) : value;
  }
  return {
    file: GNU_TIME,
    args: [
      "-q",
      "-f",
      "%M",
      "-o",
      `${command.hostMetaDir}/${USAGE_FILE}`,
      PRLIMIT,
      ...limitArgs(command.limits),
      "--",
      ...command.argv,
    ],
    env,
    cwd: command.hostWorkDir,
  };
}

export const SANDBOX_TOOLS = { bwrap: BWRAP, prlimit: PRLIMIT, setpriv: SETPRIV, time: GNU_TIME };
