// Runs one prepared host command to completion: feeds stdin, keeps at most `maxOutputBytes` of each
// stream, enforces the wall-clock limit by killing the whole process group (bwrap's --die-with-parent
// then tears down the PID namespace, so nothing the program started survives), and reports the
// outcome in SandboxFusion's CommandRunResult shape.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { constants as osConstants } from "node:os";
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
  text(): string {
    // A cut may split a UTF-8 sequence; the decoder replaces the broken tail instead of failing.
    return new TextDecoder("utf-8", { fatal: false }).decode(Buffer.concat(this.chunks));
  }
}

export function runHostCommand(host: HostCommand, options: CommandOptions): Promise<CommandOutcome> {
  return new Promise((resolve) => {
    const started = performance.now();
    const stdout = new CappedBuffer(options.maxOutputBytes);
    const stderr = new CappedBuffer(options.maxOutputBytes);
    let killedBy: KillReason | null = null;
    let settled = false;

    // bwrap reads the seccomp filter from fd 3; a fresh descriptor each time, as reading moves its offset
    const fd3 = host.fd3File ? openSync(host.fd3File, "r") : null;
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(host.file, host.args, {
        cwd: host.cwd,
        env: host.env,
        uid: host.uid,
        gid: host.gid,
        stdio: fd3 === null ? ["pipe", "pipe", "pipe"] : ["pipe", "pipe", "pipe", fd3],
        // its own process group, so one kill reaches bwrap and anything it forked on the host side
        detached: true,
      });
    } finally {
      if (fd3 !== null) closeSync(fd3);
    }
    const { stdin, stdout: out, stderr: err } = child as ChildProcessWithoutNullStreams;

    const kill = (reason: KillReason) => {
      if (killedBy === null) killedBy = reason;
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => kill("timeout"), Math.max(1, options.timeoutSeconds * 1000));
    const onAbort = () => kill("abort");
    options.signal?.addEventListener("abort", onAbort, { once: true });
    if (options.signal?.aborted) kill("abort");

    const watchOutput = () => {
      if (stdout.total + stderr.total > options.killOutputBytes) kill("output");
    };
    out.on("data", (chunk: Buffer) => {
      stdout.push(chunk);
      watchOutput();
    });
    err.on("data", (chunk: Buffer) => {
      stderr.push(chunk);
      watchOutput();
    });
    // A program that never reads stdin, or exits early, closes the pipe under us: not an error.
    stdin.on("error", () => {});
    if (options.stdin) stdin.end(options.stdin);
    else stdin.end();

    const finish = (result: CommandRunResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      resolve({ result, killedBy });
    };

    child.on("error", (error) => {
      finish({
        status: "Error",
        execution_time: null,
        return_code: null,
        stdout: null,
        stderr: `the sandbox could not start ${host.file}: ${error.message}`,
        peak_memory_kb: null,
        signal: null,
        stdout_truncated: false,
        stderr_truncated: false,
      });
    });

    // Without namespaces (isolation: none) a daemon can hold our pipes open after the program exits;
    // stop waiting for it shortly after the exit.
    child.on("exit", () => {
      setTimeout(() => {
        out.destroy();
        err.destroy();
      }, 250).unref();
    });

    child.on("close", (code, signal) => {
      const seconds = (performance.now() - started) / 1000;
      const reason = killedBy as KillReason | null;
      // bwrap and the shells report a signal death as 128 + signal number.
      const inferredSignal =
        code !== null && code > 128 && code < 128 + 65 ? SIGNAL_NAMES.get(code - 128) : undefined;
      finish({
        status: reason === "timeout" || reason === "abort" ? "TimeLimitExceeded" : "Finished",
        execution_time: Math.round(seconds * 1e6) / 1e6,
        return_code: reason === null ? code : null,
        stdout: stdout.text(),
        stderr: stderr.text(),
        peak_memory_kb: null,
        signal: reason !== null ? "SIGKILL" : (signal ?? inferredSignal ?? null),
        stdout_truncated: stdout.truncated,
        stderr_truncated: stderr.truncated,
      });
    });
  });
}
