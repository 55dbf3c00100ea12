// A fixed set of worker slots with a bounded wait queue. Each slot has its own host uid, so the
// process limit of one run is never shared with a run in another slot; when every slot is busy and
// the queue is full, new runs are refused at once (backpressure) instead of piling up in memory.
import { SandboxBusyError, SandboxClosedError } from "./errors.js";

export class WorkerPool {
  private readonly free: number[];
  private readonly waiters: { resolve(slot: number): void; reject(error: Error): void }[] = [];
  private closed = false;

  constructor(
    readonly size: number,
    readonly queueLimit: number,
  ) {
    this.free = Array.from({ length: size }, (_, i) => size - 1 - i);
  }

  get busy(): number {
    return this.size - this.free.length;
  }
  get queued(): number {
    return this.waiters.length;
  }

  /** A free slot index; waits in the queue when none is free, throws SandboxBusyError when it is full. */
  acquire(signal?: AbortSignal): Promise<number> {
    if (this.closed) return Promise.reject(new SandboxClosedError());
    const slot = this.free.pop();
    if (slot !== undefined) return Promise.resolve(slot);
    if (this.waiters.length >= this.queueLimit) {
      return Promise.reject(
        new SandboxBusyError(
          `the sandbox is busy: ${this.size} runs in progress and ${this.waiters.length} waiting (sandbox.queue). Retry later or raise sandbox.workers/queue.`,
        ),
      );
    }
    return new Promise((resolve, reject) => {
      const waiter = { resolve, reject };
      this.waiters.push(waiter);
      signal?.addEventListener(
        "abort",
        () => {
          const at = this.waiters.indexOf(waiter);
          if (at >= 0) {
            this.waiters.splice(at, 1);
            reject(signal.reason instanceof Error ? signal.reason : new Error("aborted"));
          }
        },
        { once: true },
      );
    });
  }

  release(slot: number): void {
    const next = this.waiters.shift();
    if (next) next.resolve(slot);
    else this.free.push(slot);
  }

  close(): void {
    this.closed = true;
    for (const waiter of this.waiters.splice(0)) waiter.reject(new SandboxClosedError());
  }
}
