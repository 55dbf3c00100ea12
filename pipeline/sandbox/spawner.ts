// The client of our spawner process (spawner.c), which forks and execs sandbox commands for us: a
// fork copies the forking process's page tables, so a large Node process pays far more CPU per child
// than the small spawner does (docs/sandbox.md). One spawner serves the whole process and is started
// again if it ends; it dies with us (PR_SET_PDEATHSIG), and so does each sandbox (--die-with-parent).
import { type ChildProcess, spawn } from "node:child_process";
import { constants, openSync } from "node:fs";
import { Socket } from "node:net";
import { constants as osConstants } from "node:os";
import { type ChildListeners, killGroup, SIGNAL_NAMES, type SpawnedChild } from "./child.js";
import type { HostCommand } from "./isolation.js";

const ERRNO_NAMES = new Map<number, string>(
  Object.entries(osConstants.errno).map(([name, number]) => [number as number, name]),
);

function frame(fields: string[]): Buffer {
  const body = Buffer.from(`${fields.join("\0")}\0`);
  const header = Buffer.allocUnsafe(4);
  header.writeUInt32LE(body.length);
  return Buffer.concat([header, body]);
}

/** The largest request the spawner reads (spawner.c's MAX_REQUEST). */
const MAX_REQUEST_BYTES = 4 << 20;

/**
 * A pipe end of the spawner's, opened as ours through /proc/<spawner>/fd/<n> (the same pipe); the
 * spawner then closes its copies, so end-of-file and broken pipes behave as if we had made them.
 * Null for a write end whose reader (the command) has ended already (ENXIO). Any other failure
 * (out of descriptors) throws: the command's output would be lost.
 */
function openEnd(spawnerPid: number, fd: string, write: boolean): Socket | null {
  let handle: number;
  try {
    const flags = (write ? constants.O_WRONLY : constants.O_RDONLY) | constants.O_NONBLOCK;
    handle = openSync(`/proc/${spawnerPid}/fd/${fd}`, flags);
  } catch (error) {
    if (write && (error as NodeJS.ErrnoException).code === "ENXIO") return null;
    throw error;
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
  /** asks the spawner to kill it, while we have no pid */
  askKill: (() => void) | null = null;
  private exitStatus: { code: number | null; signal: NodeJS.Signals | null } | null = null;

  constructor(
    private readonly on: ChildListeners,
    /** orders on fd 4 */
    readonly control: boolean,
    /** a status/report pipe on fd 5 */
    readonly status: boolean,
  ) {
    this.ordersEnded = !control;
  }

  /** The spawner started it: its pipes become ours. */
  adoptPipes(pid: number, spawnerPid: number, fds: string[]): void {
    this.pid = pid;
    this.started = true;
    const opened: Socket[] = [];
    const open = (fd: string | undefined, write: boolean) => {
      const socket = openEnd(spawnerPid, fd!, write);
      if (socket) opened.push(socket);
      return socket;
    };
    let stdout: Socket | null;
    let stderr: Socket | null;
    let status: Socket | null = null;
    try {
      this.stdin = open(fds[0], true);
      stdout = open(fds[1], false);
      stderr = open(fds[2], false);
      // the spawner answers "-" for a pipe the command does not have
      if (this.control) this.orders = open(fds[3], true);
      if (this.status) status = open(fds[4], false);
    } catch (error) {
      // its output could not be read: it must not run on unwatched, nor pass for a run
      for (const socket of opened) socket.destroy();
      this.stdin = this.orders = null;
      killGroup(pid);
      this.fail(error as Error);
      return;
    }
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
  fail(error: Error): void {
    this.failed = true;
    this.on.error(error);
  }

  /** It ended (or the spawner did, taking it along). */
  ended(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.exited) return;
    this.exited = true;
    // what nobody wrote to any more (a prepared sandbox thrown away unused) is closed now
    this.stdin?.destroy();
    this.stdin = null;
    this.stdinData = undefined;
    if (this.failed) return;
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
      // not started yet (perhaps stuck before its exec): the spawner knows its pid
      this.killWanted = true;
      this.askKill?.();
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

/** One spawner process and the commands it was asked to start that have not yet ended. */
class SpawnerProcess {
  private readonly waiting = new Map<string, SpawnerChild>();
  private readonly process: ChildProcess;
  gone = false;

  constructor(binary: string, onGone: () => void) {
    // a session of its own: a terminal's Ctrl-C is for us, not for it and the sandboxes it started
    this.process = spawn(binary, [String(process.pid)], {
      stdio: ["pipe", "pipe", "inherit"],
      detached: true,
    });
    let pending = "";
    this.process.stdin!.on("error", () => {});
    this.process.stdout!.setEncoding("latin1");
    this.process.stdout!.on("data", (text: string) => {
      const lines = (pending + text).split("\n");
      pending = lines.pop()!;
      for (const line of lines) this.answer(line);
    });
    const end = (reason: string) => {
      if (this.gone) return;
      this.gone = true;
      onGone();
      this.abandon(reason);
    };
    this.process.on("error", (error) => end(`the sandbox spawner ${binary} could not run: ${error.message}`));
    // 'close', not 'exit': every answer it wrote has been read by then
    this.process.on("close", (code, signal) =>
      end(`the sandbox spawner ended (${signal ?? `exit code ${code}`})`),
    );
    // idle, it must not keep the process alive; its commands' pipes do that while they run
    this.process.unref();
    (this.process.stdout as Socket).unref();
  }

  send(id: string, child: SpawnerChild, request: Buffer): void {
    this.waiting.set(id, child);
    child.askKill = () => {
      if (!this.gone) this.process.stdin!.write(frame(["kill", id]));
    };
    (this.process.stdout as Socket).ref();
    this.process.stdin!.write(request);
  }

  private answer(line: string): void {
    const [kind, id, ...rest] = line.split(" ");
    const child = this.waiting.get(id!);
    if (!child) return;
    if (kind === "ok") {
      child.adoptPipes(Number(rest[0]), this.process.pid!, rest.slice(1));
      this.process.stdin!.write(frame(["release", id!]));
    } else if (kind === "fail") {
      this.forget(id!);
      const errno = Number(rest[0]);
      const name = ERRNO_NAMES.get(errno) ?? `errno ${errno}`;
      child.fail(Object.assign(new Error(`${rest[1] ?? "spawn"} ${name}`), { code: name, errno: -errno }));
    } else if (kind === "exit") {
      this.forget(id!);
      const number = Number(rest[1]);
      if (rest[0] === "signal") child.ended(null, SIGNAL_NAMES.get(number) ?? null);
      else child.ended(number, null);
    }
  }

  private forget(id: string): void {
    this.waiting.delete(id);
    if (this.waiting.size === 0) (this.process.stdout as Socket).unref();
  }

  /** It ended: commands it had not started cannot start; those it had die with it. */
  private abandon(reason: string): void {
    const children = [...this.waiting.values()];
    this.waiting.clear();
    for (const child of children) {
      if (child.pid === undefined) child.fail(new Error(reason));
      else {
        // bwrap's --die-with-parent ends each sandbox with its parent; anything else, we end
        child.killGroup();
        child.ended(null, "SIGKILL");
      }
    }
  }
}

/** The process's spawner for one binary: started on first use, and again should it end. */
export class Spawner {
  private static readonly byBinary = new Map<string, Spawner>();
  private current: SpawnerProcess | null = null;
  private nextId = 0;

  private constructor(private readonly binary: string) {}

  static for(binary: string): Spawner {
    let spawner = Spawner.byBinary.get(binary);
    if (!spawner) {
      spawner = new Spawner(binary);
      Spawner.byBinary.set(binary, spawner);
    }
    return spawner;
  }

  spawn(host: HostCommand, on: ChildListeners): SpawnedChild {
    const child = new SpawnerChild(
      on,
      host.controlFd === true,
      host.controlFd === true || host.reportFd === true,
    );
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
      host.controlFd ? "1" : host.reportFd ? "2" : "0",
      String(args.length),
      ...args,
      String(env.length),
      ...env,
    ]);
    if (request.length - 4 > MAX_REQUEST_BYTES) {
      const error = new Error(`spawn E2BIG: command line and environment over ${MAX_REQUEST_BYTES} bytes`);
      process.nextTick(() => child.fail(Object.assign(error, { code: "E2BIG" })));
      return child;
    }
    if (!this.current || this.current.gone) {
      const started: SpawnerProcess = new SpawnerProcess(this.binary, () => {
        if (this.current === started) this.current = null;
      });
      this.current = started;
    }
    this.current.send(id, child, request);
    return child;
  }
}
