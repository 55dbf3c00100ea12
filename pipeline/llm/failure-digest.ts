// Failed attempts are logged as a digest every few seconds ("12 attempts failed: 429 x10, 500 x2;
// retrying"), not one line each: a rate-limited run of 20,000 requests would bury everything else.
import type { Logger } from "../log.js";

const INTERVAL_MS = 10_000;

export class FailureDigest {
  private readonly counts = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private readonly role: string;
  private readonly log: Logger;

  constructor(role: string, log: Logger) {
    this.role = role;
    this.log = log;
  }

  note(kind: string): void {
    this.counts.set(kind, (this.counts.get(kind) ?? 0) + 1);
    if (!this.timer) {
      this.timer = setTimeout(() => this.flush(), INTERVAL_MS);
      // A pending digest must not keep the process alive.
      this.timer.unref();
    }
  }

  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.counts.size === 0) return;
    let total = 0;
    const parts: string[] = [];
    for (const [kind, n] of this.counts) {
      total += n;
      parts.push(`${kind} x${n}`);
    }
    this.counts.clear();
    this.log.warn(
      `llm role '${this.role}': ${total} attempt${total === 1 ? "" : "s"} failed (${parts.join(", ")}); ` +
        "retried with backoff where retrying can help",
    );
  }
}
