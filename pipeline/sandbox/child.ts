// One host command's process as the sandbox supervises it: its output arrives through listeners,
// its input and orders are written once and ended, and the kill reaches its whole process group.
// Two makers: Node's own spawn (below), and our spawner process (spawner.ts), which forks for us
// at a fraction of what a fork of this process costs.
import { spawn } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { constants as osConstants } from "node:os";
import type { Duplex } from "node:stream";
import type { HostCommand } from "./isolation.js";

export interface ChildListeners {
  stdout(chunk: Buffer): void;
  stderr(chunk: Buffer): void;
  /** what a prepared command writes on fd 5 ("R" once built, "G" once it has its orders) */
  status(chunk: Buffer): void;
  /** it could not be started */
  error(error: Error): void;
  /** it ended; its pipes may still be open (a descendant holding them) */
  exit(): void;
  /** it ended and its output pipes are closed */
  close(code: number | null, signal: NodeJS.Signals | null): void;
}

export interface SpawnedChild {
  /** host pid; undefined before it started (the spawner answers shortly) or when it could not */
  readonly pid: number | undefined;
  readonly exited: boolean;
  /** writes `data` (if any) to its stdin and closes it; a closed or vanished pipe is not an error */
  endStdin(data: string | null): void;
  /** writes the orders (if any) to fd 4 and closes it */
  endOrders(orders?: Buffer): void;
  readonly ordersEnded: boolean;
  /** SIGKILLs its process group (once it has a pid, if it has none yet) */
  killGroup(): void;
  /** stops reading its pipes (something else still holds them after it ended) */
  destroyPipes(): void;
}

/** Signal numbers to their names (SIGKILL, ...). */
export const SIGNAL_NAMES = new Map<number, NodeJS.Signals>(
  Object.entries(osConstants.signals).map(([name, number]) => [number as number, name as NodeJS.Signals]),
);

/** SIGKILLs a process group, which may be gone already. */
export function killGroup(pid: number): void {
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // already gone
  }
}

/** Starts `host` with Node's child_process (a fork of this process). */
export function spawnWithNode(host: HostCommand, on: ChildListeners): SpawnedChild {
  // bwrap reads the seccomp filter from fd 3; a fresh descriptor each time, as reading moves its offset
  const fd3 = host.fd3File ? openSync(host.fd3File, "r") : null;
  let child: ReturnType<typeof spawn>;
  try {
    const stdio: ("pipe" | "ignore" | number)[] = ["pipe", "pipe", "pipe"];
    if (fd3 !== null || host.controlFd || host.reportFd) stdio.push(fd3 ?? "ignore");
    if (host.controlFd) stdio.push("pipe", "pipe");
    else if (host.reportFd) stdio.push("ignore", "pipe");
    child = spawn(host.file, host.args, {
      cwd: host.cwd,
      env: host.env,
      uid: host.uid,
      gid: host.gid,
      stdio,
      // its own process group, so one kill reaches bwrap and anything it forked on the host side
      detached: true,
    });
  } finally {
    if (fd3 !== null) closeSync(fd3);
  }
  child.stdout!.on("data", on.stdout);
  child.stderr!.on("data", on.stderr);
  // A program that never reads stdin, or exits early, closes the pipe under us: not an error.
  child.stdin!.on("error", () => {});
  const stdio = child.stdio as unknown as (Duplex | null | undefined)[];
  const orders = stdio[4] ?? null;
  const status = stdio[5] ?? null;
  orders?.on("error", () => {});
  status?.on("error", () => {});
  status?.on("data", on.status);
  child.on("error", on.error);
  child.on("exit", on.exit);
  child.on("close", on.close);
  return {
    get pid() {
      return child.pid;
    },
    get exited() {
      return child.exitCode !== null || child.signalCode !== null;
    },
    endStdin(data) {
      if (data) child.stdin!.end(data);
      else child.stdin!.end();
    },
    endOrders(message) {
      if (orders && !orders.writableEnded) orders.end(message ?? Buffer.alloc(0));
    },
    get ordersEnded() {
      return orders?.writableEnded ?? true;
    },
    killGroup() {
      if (child.pid !== undefined) killGroup(child.pid);
    },
    destroyPipes() {
      child.stdout!.destroy();
      child.stderr!.destroy();
      orders?.destroy();
      status?.destroy();
    },
  };
}
