// A per-minute budget (requests/min or tokens/min) as a token bucket that refills continuously.
// Waiters are served first come first served, so a big request is not starved by small ones. A
// charge may be corrected after the answer (estimated tokens -> reported tokens); the bucket may go
// into debt, which the next waiters pay for.
import { onAbort } from "../abort.js";
import { LlmAbortedError } from "./errors.js";

interface Waiter {
  amount: number;
  resolve: () => void;
  /** stops watching the caller's signal */
  stopWatching: (() => void) | undefined;
}

export class MinuteBudget {
  readonly perMinute: number;
  private level: number;
  private updatedAt: number;
  private readonly queue: Waiter[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly now: () => number;
  private readonly role: string;

  constructor(perMinute: number, options: { role: string; now?: () => number }) {
    this.perMinute = perMinute;
    this.level = perMinute;
    this.now = options.now ?? Date.now;
    this.updatedAt = this.now();
    this.role = options.role;
  }

  /** Waits until `amount` fits the budget, then charges it. */
  take(amount: number, signal?: AbortSignal): Promise<void> {
    // A single request larger than a whole minute's budget may still go, once the bucket is full.
    const charge = Math.min(amount, this.perMinute);
    this.refill();
    if (this.queue.length === 0 && this.level >= charge) {
      this.level -= charge;
      return Promise.resolve();
    }
    if (signal?.aborted) return Promise.reject(new LlmAbortedError(this.role));
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { amount: charge, resolve, stopWatching: undefined };
      if (signal) {
        waiter.stopWatching = onAbort(signal, () => {
          const at = this.queue.indexOf(waiter);
          if (at >= 0) this.queue.splice(at, 1);
          reject(new LlmAbortedError(this.role));
          this.schedule();
        });
      }
      this.queue.push(waiter);
      this.schedule();
    });
  }

  /** Corrects an earlier charge: positive gives budget back, negative charges more. */
  adjust(delta: number): void {
    this.refill();
    this.level = Math.min(this.perMinute, this.level + delta);
    this.drain();
  }

  private refill(): void {
    const now = this.now();
    const elapsed = now - this.updatedAt;
    if (elapsed > 0) {
      this.level = Math.min(this.perMinute, this.level + (elapsed * this.perMinute) / 60_000);
      this.updatedAt = now;
    }
  }

  private drain(): void {
    while (this.queue.length > 0 && this.level >= this.queue[0]!.amount) {
      const waiter = this.queue.shift()!;
      this.level -= waiter.amount;
      waiter.stopWatching?.();
      waiter.resolve();
    }
    this.schedule();
  }

  private schedule(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const head = this.queue[0];
    if (!head) return;
    const missing = head.amount - this.level;
    const waitMs = Math.max(1, Math.ceil((missing * 60_000) / this.perMinute));
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.refill();
      this.drain();
    }, waitMs);
  }
}
