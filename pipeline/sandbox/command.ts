// Runs one prepared host command to completion: feeds stdin, keeps at most `maxOutputBytes` of each
// stream, enforces the wall-clock limit by killing the whole process group (bwrap's --die-with-parent
// then tears down the PID namespace, so nothing the program started survives), and reports the
// outcome in SandboxFusion's CommandRunResult shape.
import { type ChildListeners, SIGNAL_NAMES, type SpawnedChild, spawnWithNode } from "./child.js";
import type { HostCommand } from "./isolation.js";
import { Spawner } from "./spawner.js";
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

/** Output a prepared command may write before its run (bwrap's own errors), kept per stream. */
const EARLY_OUTPUT_BYTES = 64 * 1024;

/**
 * How long a prepared command still being built may take to report "R" after we asked it to stop,
 * before it is killed anyway. Building takes milliseconds; this only bounds a wedged build.
 */
export const UNBUILT_KILL_DEADLINE_MS = 10_000;

/** The most of a command's fd 5 kept: "R", "G" and a usage report of two lines. */
const MAX_STATUS_CHARS = 4096;
/** The launcher's usage report: refused packets, then peak resident memory in KiB. */
const USAGE_REPORT = /^network \d{1,12}\n\d{1,12}\n$/;

/** How long after our child exits we still read its pipes (output a descendant may still flush). */
const PIPE_GRACE_MS = 250;

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

/**
 * A command may be spawned before its run starts (a sandbox prepared ahead, waiting for its orders on
 * fd 4): `spawn` starts it, `run` sends the orders and supervises it from then on, so the clock and
 * the output caps cover the run only.
 */
export class HostProcess {
  private stdout = new CappedBuffer(EARLY_OUTPUT_BYTES);
  private stderr = new CappedBuffer(EARLY_OUTPUT_BYTES);
  private closed: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  private spawnError: Error | null = null;
  private onSettled: (() => void) | null = null;
  private onOutput: (() => void) | null = null;
  private started = false;
  private isReady = false;
  /** whether a prepared command took its orders (one that died before never ran anything) */
  tookOrders = false;
  private onReady: (() => void) | null = null;
  private readonly child: SpawnedChild;
  /** what the command wrote on fd 5: a prepared one "R", "G", then its launcher's usage report; a
   * report-only one the report alone */
  private statusText = "";
  private exited = false;
  /** told to leave (a prepared sandbox that will not be used): never to be given a run */
  private stopping = false;
  /** a kill asked for before the sandbox was built, carried out once it is (or at the deadline) */
  private pendingKill: NodeJS.Timeout | null = null;

  private constructor(private readonly host: HostCommand) {
    const listeners: ChildListeners = {
      stdout: (chunk) => this.output(this.stdout, chunk),
      stderr: (chunk) => this.output(this.stderr, chunk),
      status: (chunk) => {
        if (this.statusText.length < MAX_STATUS_CHARS) this.statusText += chunk.toString("latin1");
        if (chunk.includes("G")) this.tookOrders = true;
        if (this.isReady) return;
        this.isReady = true;
        // built: bwrap's --die-with-parent now holds, so a run stopped meanwhile can be killed (one
        // without orders reads EOF and leaves by itself)
        if (this.pendingKill && this.started) this.killNow();
        this.onReady?.();
      },
      error: (error) => {
        this.spawnError = error;
        this.onSettled?.();
      },
      // Once our child is gone, stop waiting for pipes something else still holds: a daemon of
      // `isolation: none`, or a half-built sandbox whose bwrap was killed before --die-with-parent was
      // armed (its launcher, orphaned, would hold fd 4 for ever, and 'close' would never come).
      // Closing fd 4 also makes such an orphaned launcher read EOF and leave without running anything.
      exit: () => {
        this.exited = true;
        if (this.pendingKill) clearTimeout(this.pendingKill);
        this.pendingKill = null;
        setTimeout(() => this.child.destroyPipes(), PIPE_GRACE_MS).unref();
      },
      close: (code, signal) => {
        this.closed = { code, signal };
        this.onSettled?.();
      },
    };
    this.child = host.spawner
      ? Spawner.for(host.spawner).spawn(host, listeners)
      : spawnWithNode(host, listeners);
  }

  private output(stream: CappedBuffer, chunk: Buffer): void {
    stream.push(chunk);
    this.onOutput?.();
  }

  /** Starts `host` (through our spawner process where the host command names one). */
  static spawn(host: HostCommand): HostProcess {
    return new HostProcess(host);
  }

  /** Host pid of the command (undefined before it started, or when it could not be). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Whether the process is still there to be given its run (a prepared one may have died idle). */
  get usable(): boolean {
    return (
      !this.started &&
      !this.stopping &&
      this.closed === null &&
      this.spawnError === null &&
      !this.child.exited
    );
  }

  /**
   * The usage report its launcher wrote on fd 5 once the program ended (a prepared command's after
   * its "R" and "G", a report-only command's alone), or null when it wrote none.
   */
  usageReport(): string | null {
    // exactly the launcher's two lines, or nothing: a report cut at the cap, or otherwise not the
    // launcher's, is no report
    if (this.statusText.length >= MAX_STATUS_CHARS) return null;
    const start = this.host.controlFd ? this.statusText.indexOf("G") + 1 : 0;
    if (this.host.controlFd && start === 0) return null;
    const report = this.statusText.slice(start);
    return USAGE_REPORT.test(report) ? report : null;
  }

  /** Resolves once a prepared command reports it waits for its orders, or once it is gone. */
  ready(): Promise<void> {
    if (this.isReady || this.closed || this.spawnError) return Promise.resolve();
    return new Promise((resolve) => {
      const previous = this.onReady;
      this.onReady = () => {
        previous?.();
        resolve();
      };
      this.whenSettled(resolve);
    });
  }

  /** Calls `then` once the process is gone, after whatever was waiting for that before. */
  private whenSettled(then: () => void): void {
    const previous = this.onSettled;
    this.onSettled = () => {
      previous?.();
      then();
    };
  }

  /**
   * Stops the command (a prepared sandbox that will not be used, or a run being stopped).
   *
   * A prepared sandbox is never killed while it is being built: bwrap arms --die-with-parent in the
   * sandbox's init only at the end of its set-up, so killing bwrap's process group before that
   * leaves the half-built sandbox running on, orphaned, holding our pipes (and 'close' never comes).
   * One that has no orders yet is told to leave instead: EOF on fd 4, on which its launcher exits
   * unused, built or not. One that has its orders is killed once it reports it is built. Either
   * way it is killed at UNBUILT_KILL_DEADLINE_MS should it still be there.
   */
  kill(): void {
    if (this.spawnError) return;
    const waiting = this.host.controlFd && !this.exited && !this.closed;
    if (waiting && (!this.started || !this.isReady)) {
      this.stopping = true;
      if (!this.started && !this.child.ordersEnded) this.child.endOrders();
      this.pendingKill ??= setTimeout(() => this.killNow(), UNBUILT_KILL_DEADLINE_MS);
      return;
    }
    this.killNow();
  }

  private killNow(): void {
    if (this.pendingKill) clearTimeout(this.pendingKill);
    this.pendingKill = null;
    // the group outlives its leader while a member (a daemon of `isolation: none`) is left
    this.child.killGroup();
  }

  /** Waits until the process is gone, for clean-up of one that was killed unused. */
  settled(): Promise<void> {
    if (this.closed || this.spawnError) return Promise.resolve();
    return new Promise((resolve) => this.whenSettled(resolve));
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
      this.whenSettled(finish);
      if (this.closed || this.spawnError) finish();
      if (this.host.controlFd && !this.child.ordersEnded) this.child.endOrders(orders);
      this.child.endStdin(options.stdin);
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
