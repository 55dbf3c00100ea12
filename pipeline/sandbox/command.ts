// Runs one prepared host command to completion: feeds stdin, keeps at most `maxOutputBytes` of each
// stream, enforces the wall-clock limit by killing the whole process group (bwrap's --die-with-parent
// then tears down the PID namespace, so nothing the program started survives), and reports the
// outcome in SandboxFusion's CommandRunResult shape.
//
// A command may be spawned before its run starts (a sandbox prepared ahead, waiting for its orders
// on fd 4): `HostProcess.spawn` starts it, `run` sends the orders and supervises it from then on, so
// the clock and the output caps cover the run only.
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { constants as osConstants } from "node:os";
import type { Duplex } from "node:stream";
import type { HostCommand } from "./isolation.js";
import type { CommandRunResult } from "./types.js";

export interface CommandOptions {
  stdin: string | null;
  /** wall-clock limit, seconds */
  timeoutSeconds: number;
  maxOutputBytes: number;
  /** total output after which the command is killed as a runaway */
  killOutputBytes: number;
  signal?: AbortSignal;
}

/** Why we, not the program, ended the command. */
export type KillReason = "timeout" | "output" | "abort";

export interface CommandOutcome {
  result: CommandRunResult;
  killedBy: KillReason | null;
}

const SIGNAL_NAMES = new Map<number, string>(
  Object.entries(osConstants.signals).map(([name, number]) => [number as number, name]),
);

/** Output a prepared command may write before its run (bwrap's own errors), kept per stream. */
const EARLY_OUTPUT_BYTES = 64 * 1024;

/** Collects a stream up to a cap, counting (but dropping) everything after it. */
class CappedBuffer {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  total = 0;
  constructor(private readonly cap: number) {}
  push(chunk: Buffer): void {
    this.total += chunk.length;
    const room = this.cap - this.kept;
    if (room <= 0) return;
    const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
    this.chunks.push(part);
    this.kept += part.length;
  }
  get truncated(): boolean {
    return this.total > this.kept;
  }
  bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }
  text(): string {
    // A cut may split a UTF-8 sequence; the decoder replaces the broken tail instead of failing.
    return new TextDecoder("utf-8", { fatal: false }).decode(this.bytes());
  }
}

export class HostProcess {
  private stdout = new CappedBuffer(EARLY_OUTPUT_BYTES);
  private stderr = new CappedBuffer(EARLY_OUTPUT_BYTES);
  private closed: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  private spawnError: Error | null = null;
  private onSettled: (() => void) | null = null;
  private onOutput: (() => void) | null = null;
  private started = false;
  private isReady = false;
  private acknowledged = false;
  private onReady: (() => void) | null = null;

  private constructor(
    private readonly host: HostCommand,
    private readonly child: ChildProcess,
  ) {
    child.stdout!.on("data", (chunk: Buffer) => {
      this.stdout.push(chunk);
      this.onOutput?.();
    });
    child.stderr!.on("data", (chunk: Buffer) => {
      this.stderr.push(chunk);
      this.onOutput?.();
    });
    // A program that never reads stdin, or exits early, closes the pipe under us: not an error.
    child.stdin!.on("error", () => {});
    const control = child.stdio[4] as Duplex | null | undefined;
    control?.on("error", () => {});
    control?.on("data", (chunk: Buffer) => {
      if (chunk.includes("G")) this.acknowledged = true;
      if (this.isReady) return;
      this.isReady = true;
      this.onReady?.();
    });
    child.on("error", (error) => {
      this.spawnError = error;
      this.onSettled?.();
    });
    // Without namespaces (isolation: none) a daemon can hold our pipes open after the program exits;
    // stop waiting for it shortly after the exit.
    child.on("exit", () => {
      setTimeout(() => {
        child.stdout!.destroy();
        child.stderr!.destroy();
      }, 250).unref();
    });
    child.on("close", (code, signal) => {
      this.closed = { code, signal };
      this.onSettled?.();
    });
  }

  static spawn(host: HostCommand): HostProcess {
    // bwrap reads the seccomp filter from fd 3; a fresh descriptor each time, as reading moves its offset
    const fd3 = host.fd3File ? openSync(host.fd3File, "r") : null;
    try {
      const stdio: ("pipe" | "ignore" | number)[] = ["pipe", "pipe", "pipe"];
      if (fd3 !== null || host.controlFd) stdio.push(fd3 ?? "ignore");
      if (host.controlFd) stdio.push("pipe");
      const child = spawn(host.file, host.args, {
        cwd: host.cwd,
        env: host.env,
        uid: host.uid,
        gid: host.gid,
        stdio,
        // its own process group, so one kill reaches bwrap and anything it forked on the host side
        detached: true,
      });
      return new HostProcess(host, child);
    } finally {
      if (fd3 !== null) closeSync(fd3);
    }
  }

  /** Whether the process is still there to be given its run (a prepared one may have died idle). */
  get usable(): boolean {
    return !this.started && this.closed === null && this.spawnError === null && this.child.exitCode === null;
  }

  /** Whether a prepared command took its orders (one that died before never ran anything). */
  get tookOrders(): boolean {
    return this.acknowledged;
  }

  /** Resolves once a prepared command reports it waits for its orders, or once it is gone. */
  ready(): Promise<void> {
    if (this.isReady || this.closed || this.spawnError) return Promise.resolve();
    return new Promise((resolve) => {
      const previousReady = this.onReady;
      this.onReady = () => {
        previousReady?.();
        resolve();
      };
      const previousSettled = this.onSettled;
      this.onSettled = () => {
        previousSettled?.();
        resolve();
      };
    });
  }

  /** Kills the process group (a prepared sandbox that will not be used, or a run being stopped). */
  kill(): void {
    if (this.child.pid === undefined) return;
    try {
      process.kill(-this.child.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }

  /** Waits until the process is gone, for clean-up of one that was killed unused. */
  settled(): Promise<void> {
    if (this.closed || this.spawnError) return Promise.resolve();
    return new Promise((resolve) => {
      const previous = this.onSettled;
      this.onSettled = () => {
        previous?.();
        resolve();
      };
    });
  }

  /** Starts the run (sending `orders` on fd 4 to a prepared command) and supervises it to its end. */
  run(options: CommandOptions, orders?: Buffer): Promise<CommandOutcome> {
    this.started = true;
    const startedAt = performance.now();
    const early = [this.stdout.bytes(), this.stderr.bytes()] as const;
    this.stdout = new CappedBuffer(options.maxOutputBytes);
    this.stderr = new CappedBuffer(options.maxOutputBytes);
    if (early[0].length) this.stdout.push(early[0]);
    if (early[1].length) this.stderr.push(early[1]);
    let killedBy: KillReason | null = null;
    const kill = (reason: KillReason) => {
      if (killedBy === null) killedBy = reason;
      this.kill();
    };
    return new Promise((resolve) => {
      const timer = setTimeout(() => kill("timeout"), Math.max(1, options.timeoutSeconds * 1000));
      const onAbort = () => kill("abort");
      options.signal?.addEventListener("abort", onAbort, { once: true });
      if (options.signal?.aborted) kill("abort");
      this.onOutput = () => {
        if (this.stdout.total + this.stderr.total > options.killOutputBytes) kill("output");
      };
      const finish = () => {
        clearTimeout(timer);
        options.signal?.removeEventListener("abort", onAbort);
        resolve({ result: this.result(startedAt, killedBy), killedBy });
      };
      const previous = this.onSettled;
      this.onSettled = () => {
        previous?.();
        finish();
      };
      if (this.closed || this.spawnError) finish();
      const control = this.child.stdio[4] as Duplex | null | undefined;
      if (control) control.end(orders ?? Buffer.alloc(0));
      if (options.stdin) this.child.stdin!.end(options.stdin);
      else this.child.stdin!.end();
    });
  }

  private result(startedAt: number, reason: KillReason | null): CommandRunResult {
    if (this.spawnError) {
      return {
        status: "Error",
        execution_time: null,
        return_code: null,
        stdout: null,
        stderr: `the sandbox could not start ${this.host.file}: ${this.spawnError.message}`,
        peak_memory_kb: null,
        signal: null,
        stdout_truncated: false,
        stderr_truncated: false,
      };
    }
    const { code, signal } = this.closed!;
    const seconds = (performance.now() - startedAt) / 1000;
    // bwrap and the shells report a signal death as 128 + signal number.
    const inferredSignal =
      code !== null && code > 128 && code < 128 + 65 ? SIGNAL_NAMES.get(code - 128) : undefined;
    return {
      status: reason === "timeout" || reason === "abort" ? "TimeLimitExceeded" : "Finished",
      execution_time: Math.round(seconds * 1e6) / 1e6,
      return_code: reason === null ? code : null,
      stdout: this.stdout.text(),
      stderr: this.stderr.text(),
      peak_memory_kb: null,
      signal: reason !== null ? "SIGKILL" : (signal ?? inferredSignal ?? null),
      stdout_truncated: this.stdout.truncated,
      stderr_truncated: this.stderr.truncated,
    };
  }
}

/** Spawns `host` and runs it to completion. */
export function runHostCommand(host: HostCommand, options: CommandOptions): Promise<CommandOutcome> {
  return HostProcess.spawn(host).run(options);
}
