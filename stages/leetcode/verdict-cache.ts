// Sandbox verdicts kept in the stage's work dir, so a global stage that starts over (after Ctrl-C,
// `kill -9` or a failure) does not run again what it already judged. One JSON line per verdict,
// keyed by a hash of everything the verdict depends on (program, language, tests, limits); appended
// as each verdict arrives, so a kill loses at most the line being written, which the next open cuts.
// Each line also keeps what the verdict cost in the sandbox (`x`), so a run that reads it back counts
// those programs as the run that judged it did (the manifest's `sandbox`), once per run.

import { createHash } from "node:crypto";
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  truncateSync,
  writeSync,
} from "node:fs";
import path from "node:path";
import { ReplayCosts, type SandboxUsage } from "../../pipeline/usage.js";

export class VerdictCache<V> {
  private readonly entries = new Map<string, V>();
  private readonly costs = new ReplayCosts();
  private fd: number | undefined;
  private unsynced = 0;

  constructor(private readonly file: string) {
    mkdirSync(path.dirname(file), { recursive: true });
    if (!existsSync(file)) return;
    const text = readFileSync(file, "utf8");
    const end = text.lastIndexOf("\n") + 1;
    // a torn last line (killed mid-write) is cut, so the next append starts on a fresh line
    if (end < text.length) truncateSync(file, Buffer.byteLength(text.slice(0, end)));
    for (const line of text.slice(0, end).split("\n")) {
      if (line === "") continue;
      try {
        const entry = JSON.parse(line) as { k?: unknown; v?: V; x?: unknown } | null;
        if (typeof entry?.k === "string" && entry.v !== undefined) {
          this.entries.set(entry.k, entry.v);
          this.costs.loaded(entry.k, entry.x);
        }
      } catch {
        // a line that does not parse is a verdict to compute again, nothing more
      }
    }
  }

  static key(parts: unknown): string {
    return createHash("sha256").update(JSON.stringify(parts)).digest("hex");
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: string): V | undefined {
    return this.entries.get(key);
  }

  /**
   * What the sandbox ran for the verdict under `key` when an earlier process judged it, the first time
   * this process reads it back; nothing after that, nor for a verdict this process judged.
   */
  replayCost(key: string): SandboxUsage | undefined {
    return this.costs.take(key);
  }

  /** Keeps a verdict, with `cost`: what the sandbox ran for it. */
  set(key: string, value: V, cost?: SandboxUsage): void {
    this.entries.set(key, value);
    this.costs.made(key);
    this.fd ??= openSync(this.file, "a");
    writeSync(this.fd, `${JSON.stringify({ k: key, v: value, ...(cost ? { x: cost } : {}) })}\n`);
    if (++this.unsynced >= 64) this.sync();
  }

  sync(): void {
    if (this.fd !== undefined && this.unsynced > 0) fsyncSync(this.fd);
    this.unsynced = 0;
  }

  close(): void {
    this.sync();
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
