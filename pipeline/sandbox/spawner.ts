// The client of our spawner process (spawner.c): it forks and execs sandbox commands for us. A fork
// copies the forking process's page tables, so a Node process of 100-250 MiB pays 1-5 ms of CPU for
// each child it forks itself (bench/sandbox/spawn.ts); the spawner is a few hundred KiB.
//
// Each command's pipes are made by the spawner; we open our ends of them through
// /proc/<spawner>/fd/<n> (a pipe opened there is the same pipe), then tell it to close its copies, so
// end-of-file and broken pipes behave as if we had made them. One spawner serves the whole process
// and is started again if it ends; the spawner dies with us (PR_SET_PDEATHSIG), and so does each
// sandbox, whose bwrap runs with --die-with-parent.
import { type ChildProcess, spawn } from "node:child_process";
import { constants, openSync } from "node:fs";
import { Socket } from "node:net";
import { constants as osConstants } from "node:os";
import { type ChildListeners, killGroup, type SpawnedChild } from "./child.js";
import type { HostCommand } from "./isolation.js";

const SIGNAL_NAMES = new Map<number, NodeJS.Signals>(
  Object.entries(osConstants.signals).map(([name, number]) => [number as number, name as NodeJS.Signals]),
);
const ERRNO_NAMES = new Map<number, string>(
  Object.entries(osConstants.errno).map(([name, number]) => [number as number, name]),
);

function frame(fields: string[]): Buffer {
  const body = Buffer.from(`${fields.join("\0")}\0`);
  const header = Buffer.allocUnsafe(4);
  header.writeUInt32LE(body.length);
  return Buffer.concat([header, body]);
}

/** A pipe end of the spawner's, opened as ours; null when the other side is already gone. */
function openEnd(spawnerPid: number, fd: string, write: boolean): Socket | null {
  let handle: number;
  try {
    const flags = (write ? constants.O_WRONLY : constants.O_RDONLY) | constants.O_NONBLOCK;
    handle = openSync(`/proc/${spawnerPid}/fd/${fd}`, flags);
  } catch {
    // ENXIO: a write end whose reader (the command) has ended already
    return null;
  }
  const socket = new Socket({ fd: handle, readable: !write, writable: write });
  socket.on("error", () => {});
  return socket;
}

/** A command started by the spawner: buffers what is written before its pipes are ours. */
class SpawnerChild implements SpawnedChild {
  pid: number | undefined = undefined;
  exited = false;
  ordersEnded: boolean;
  private stdin: Socket | null = null;
  private orders: Socket | null = null;
  private readers: Socket[] = [];
  private open = 0;
  private started = false;
  private failed = false;
  private stdinData: string | null | undefined = undefined;
  private ordersData: Buffer | undefined = undefined;
  private killWanted = false;
  private exitStatus: { code: number | null; signal: NodeJS.Signals | null } | null = null;

  constructor(
    private readonly on: ChildListeners,
    readonly control: boolean,
  ) {
    this.ordersEnded = !control;
  }

  /** The spawner started it: its pipes become ours. */
  started_(pid: number, spawnerPid: number, fds: string[]): void {
    this.pid = pid;
    this.started = true;
    this.stdin = openEnd(spawnerPid, fds[0]!, true);
    const stdout = openEnd(spawnerPid, fds[1]!, false);
    const stderr = openEnd(spawnerPid, fds[2]!, false);
    if (this.control) this.orders = openEnd(spawnerPid, fds[3]!, true);
    const status = this.control ? openEnd(spawnerPid, fds[4]!, false) : null;
    for (const [reader, listener] of [
      [stdout, this.on.stdout],
      [stderr, this.on.stderr],
      [status, this.on.status],
    ] as const) {
      if (!reader) continue;
      this.readers.push(reader);
      this.open++;
      reader.on("data", listener);
      reader.on("close", () => {
        this.open--;
        this.maybeClose();
      });
    }
    if (this.stdinData !== undefined) this.endStdin(this.stdinData);
    if (this.ordersData !== undefined) this.endOrders(this.ordersData);
    if (this.killWanted) this.killGroup();
  }

  /** The spawner could not start it. */
  failed_(error: Error): void {
    this.failed = true;
    this.on.error(error);
  }

  /** It ended (or the spawner did, taking it along). */
  ended(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.exited) return;
    this.exited = true;
    this.exitStatus = { code, signal };
    this.on.exit();
    this.maybeClose();
  }

  private maybeClose(): void {
    if (!this.exitStatus || this.open > 0) return;
    const { code, signal } = this.exitStatus;
    this.exitStatus = null;
    this.on.close(code, signal);
  }

  endStdin(data: string | null): void {
    if (!this.started) {
      this.stdinData = data;
      return;
    }
    const stdin = this.stdin;
    this.stdin = null;
    if (!stdin) return;
    if (data) stdin.end(data);
    else stdin.end();
  }

  endOrders(orders?: Buffer): void {
    this.ordersEnded = true;
    if (!this.started) {
      this.ordersData = orders ?? Buffer.alloc(0);
      return;
    }
    const pipe = this.orders;
    this.orders = null;
    if (!pipe) return;
    if (orders?.length) pipe.end(orders);
    else pipe.end();
  }

  killGroup(): void {
    if (this.failed) return;
    if (this.pid === undefined) {
      this.killWanted = true;
      return;
    }
    killGroup(this.pid);
  }

  destroyPipes(): void {
    for (const reader of this.readers) reader.destroy();
    this.orders?.destroy();
    this.orders = null;
  }
}

/** One spawner process and the commands it started that have not yet ended. */
export class Spawner {
  private static readonly byBinary = new Map<string, Spawner>();
  private process: ChildProcess | null = null;
  private readonly waiting = new Map<string, SpawnerChild>();
  private nextId = 0;
  private pending = "";

  private constructor(private readonly binary: string) {}

  /** The process's spawner for this binary (started on first use, and again should it end). */
  static for(binary: string): Spawner {
    let spawner = Spawner.byBinary.get(binary);
    if (!spawner) {
      spawner = new Spawner(binary);
      Spawner.byBinary.set(binary, spawner);
    }
    return spawner;
  }

  spawn(host: HostCommand, on: ChildListeners): SpawnedChild {
    const child = new SpawnerChild(on, host.controlFd === true);
    const id = String(this.nextId++);
    const args = [host.file, ...host.args];
    const env = Object.entries(host.env).map(([key, value]) => `${key}=${value}`);
    const request = frame([
      "spawn",
      id,
      host.file,
      host.cwd,
      String(host.uid ?? -1),
      String(host.gid ?? -1),
      host.fd3File ?? "",
      host.controlFd ? "1" : "0",
      String(args.length),
      ...args,
      String(env.length),
      ...env,
    ]);
    const spawner = this.running();
    this.waiting.set(id, child);
    (spawner.stdout as Socket).ref();
    spawner.stdin!.write(request);
    return child;
  }

  private running(): ChildProcess {
    if (this.process) return this.process;
    const spawner = spawn(this.binary, [], { stdio: ["pipe", "pipe", "inherit"] });
    this.process = spawner;
    this.pending = "";
    spawner.stdin!.on("error", () => {});
    spawner.stdout!.setEncoding("latin1");
    spawner.stdout!.on("data", (text: string) => this.read(spawner, text));
    const gone = (reason: string) => {
      if (this.process !== spawner) return;
      this.process = null;
      this.abandon(reason);
    };
    spawner.on("error", (error) =>
      gone(`the sandbox spawner ${this.binary} could not run: ${error.message}`),
    );
    spawner.on("exit", (code, signal) =>
      gone(`the sandbox spawner ended (${signal ?? `exit code ${code}`})`),
    );
    // idle, it must not keep the process alive; its commands' pipes do that while they run
    spawner.unref();
    (spawner.stdout as Socket).unref();
    return spawner;
  }

  private read(spawner: ChildProcess, text: string): void {
    const lines = (this.pending + text).split("\n");
    this.pending = lines.pop()!;
    for (const line of lines) {
      const [kind, id, ...rest] = line.split(" ");
      const child = this.waiting.get(id!);
      if (!child) continue;
      if (kind === "ok") {
        child.started_(Number(rest[0]), spawner.pid!, rest.slice(1));
        spawner.stdin!.write(frame(["release", id!]));
      } else if (kind === "fail") {
        this.forget(id!);
        const errno = Number(rest[0]);
        const name = ERRNO_NAMES.get(errno) ?? `errno ${errno}`;
        const error = Object.assign(new Error(`${rest[1] ?? "spawn"} ${name}`), {
          code: name,
          errno: -errno,
        });
        child.failed_(error);
      } else if (kind === "exit") {
        this.forget(id!);
        const number = Number(rest[1]);
        if (rest[0] === "signal") child.ended(null, SIGNAL_NAMES.get(number) ?? null);
        else child.ended(number, null);
      }
    }
  }

  private forget(id: string): void {
    this.waiting.delete(id);
    if (this.waiting.size === 0) (this.process?.stdout as Socket | undefined)?.unref();
  }

  /** The spawner ended: commands it had not started cannot start; those it had die with it. */
  private abandon(reason: string): void {
    const children = [...this.waiting.values()];
    this.waiting.clear();
    for (const child of children) {
      if (child.pid === undefined) child.failed_(new Error(reason));
      else {
        // bwrap's --die-with-parent ends each sandbox with its parent; anything else, we end
        child.killGroup();
        child.ended(null, "SIGKILL");
      }
    }
  }
}
