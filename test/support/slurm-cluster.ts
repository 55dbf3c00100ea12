// A real one-node Slurm for the launch tests: munged with a fresh key, slurmctld -D and slurmd -D with
// a slurm.conf written into a temporary directory (its own munge socket, ports, spool and state), so
// nothing of a system Slurm or munge is touched. Needs root (SlurmUser root) and Debian's slurm-wlm
// and munge packages (scripts/install-slurm.sh).
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./ports.js";

export interface SlurmCluster {
  dir: string;
  /** the environment a client command needs: SLURM_CONF pointing at this cluster */
  env: NodeJS.ProcessEnv;
  /** the daemons' logs, for a failing test's message */
  logs(): string;
  stop(): Promise<void>;
}

const DAEMONS = ["/usr/sbin/munged", "/usr/sbin/slurmctld", "/usr/sbin/slurmd"];
const CLIENTS = ["/usr/bin/sbatch", "/usr/bin/sinfo", "/usr/bin/squeue"];
const NODE = "cfnode";

/** Why this machine cannot run the test cluster, or undefined when it can. */
export function slurmUnavailable(): string | undefined {
  if (process.platform !== "linux") return "Slurm's daemons run on Linux only";
  if (process.getuid?.() !== 0)
    return "slurmd and slurmctld run as SlurmUser root here: run the tests as root";
  const missing = [...DAEMONS, ...CLIENTS].filter((f) => !existsSync(f));
  if (missing.length > 0) {
    return `${missing.join(", ")} not installed: run scripts/install-slurm.sh (Debian's slurm-wlm and munge)`;
  }
  return undefined;
}

export async function startSlurm(): Promise<SlurmCluster> {
  const dir = mkdtempSync(join(tmpdir(), "cf-slurm-"));
  const children: ChildProcess[] = [];
  const logFiles = ["munged.log", "slurmctld.out", "slurmctld.log", "slurmd.out", "slurmd.log"].map((f) =>
    join(dir, f),
  );
  const logs = () =>
    logFiles
      .filter((f) => existsSync(f))
      .map((f) => `--- ${f}\n${readFileSync(f, "utf8").split("\n").slice(-30).join("\n")}`)
      .join("\n");
  const stop = async () => {
    // slurmd before slurmctld before munged: each needs the next one to shut down cleanly
    for (const child of children.reverse()) await terminate(child);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const key = join(dir, "munge.key");
    writeFileSync(key, randomBytes(1024), { mode: 0o400 });
    const socket = join(dir, "munge.sock");
    children.push(
      daemon(
        "/usr/sbin/munged",
        [
          "--foreground",
          "--force",
          `--key-file=${key}`,
          `--socket=${socket}`,
          `--pid-file=${join(dir, "munged.pid")}`,
          `--seed-file=${join(dir, "munged.seed")}`,
        ],
        join(dir, "munged.log"),
      ),
    );
    await until(() => existsSync(socket), 10_000, "munged to create its socket", logs);
    for (const sub of ["state", "spool"]) mkdirSync(join(dir, sub));
    const conf = join(dir, "slurm.conf");
    writeFileSync(conf, slurmConf(dir, socket, await freePort(), await freePort()));
    const env = { ...process.env, SLURM_CONF: conf };
    children.push(daemon("/usr/sbin/slurmctld", ["-D", "-f", conf], join(dir, "slurmctld.out"), env));
    children.push(daemon("/usr/sbin/slurmd", ["-D", "-N", NODE, "-f", conf], join(dir, "slurmd.out"), env));
    await until(
      () => {
        for (const child of children) {
          if (child.exitCode !== null)
            throw new Error(`${child.spawnfile} exited with ${child.exitCode}\n${logs()}`);
        }
        try {
          return execFileSync("sinfo", ["-h", "-N", "-o", "%T"], { env, encoding: "utf8" }).trim() === "idle";
        } catch {
          return false;
        }
      },
      60_000,
      `node ${NODE} to be idle`,
      logs,
    );
    return { dir, env, logs, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** One node with this machine's real CPUs and memory (as slurmd itself counts them), one partition. */
function slurmConf(dir: string, mungeSocket: string, ctldPort: number, slurmdPort: number): string {
  const hardware = execFileSync("/usr/sbin/slurmd", ["-C"], { encoding: "utf8" }).split("\n")[0]!;
  const cpus = /CPUs=(\d+)/.exec(hardware)?.[1] ?? "1";
  const memory = /RealMemory=(\d+)/.exec(hardware)?.[1] ?? "1000";
  return `${[
    "ClusterName=cftest",
    "SlurmctldHost=localhost",
    "SlurmctldAddr=127.0.0.1",
    "SlurmUser=root",
    "SlurmdUser=root",
    `SlurmctldPort=${ctldPort}`,
    `SlurmdPort=${slurmdPort}`,
    "AuthType=auth/munge",
    `AuthInfo=socket=${mungeSocket}`,
    "CredType=cred/munge",
    `StateSaveLocation=${join(dir, "state")}`,
    `SlurmdSpoolDir=${join(dir, "spool")}`,
    `SlurmctldPidFile=${join(dir, "slurmctld.pid")}`,
    `SlurmdPidFile=${join(dir, "slurmd.pid")}`,
    `SlurmctldLogFile=${join(dir, "slurmctld.log")}`,
    `SlurmdLogFile=${join(dir, "slurmd.log")}`,
    "ProctrackType=proctrack/linuxproc",
    "TaskPlugin=task/none",
    "SelectType=select/cons_tres",
    "SelectTypeParameters=CR_Core",
    "SchedulerType=sched/backfill",
    "ReturnToService=2",
    "MpiDefault=none",
    "JobAcctGatherType=jobacct_gather/none",
    "AccountingStorageType=accounting_storage/none",
    // a finished job stays visible to squeue/scontrol for this long (the tests look it up)
    "MinJobAge=600",
    `NodeName=${NODE} NodeAddr=127.0.0.1 CPUs=${cpus} RealMemory=${memory} State=UNKNOWN`,
    "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
  ].join("\n")}\n`;
}

function daemon(file: string, args: string[], log: string, env = process.env): ChildProcess {
  writeFileSync(log, "");
  const child = spawn(file, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  const append = (chunk: Buffer) => writeFileSync(log, chunk, { flag: "a" });
  child.stdout?.on("data", append);
  child.stderr?.on("data", append);
  return child;
}

async function terminate(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((done) => child.once("exit", done));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}

async function until(check: () => boolean, ms: number, what: string, logs: () => string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${logs()}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
