// Append-only JSONL parts. One line is one committed entry: the outcome of one input record (its
// outputs, rejects, or failure), written in a single append. A `kill -9` can only tear the last line,
// which `repairTail` cuts off on the next open; an input whose entry is missing is simply redone.
import {
  closeSync,
  createReadStream,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readSync,
  writeSync,
} from "node:fs";
import { createInterface } from "node:readline";
import type { PipelineRecord, Reject } from "../record.js";

export interface Entry {
  /** input position (record-wise stages) or -1 (global stages) */
  s: number;
  o?: PipelineRecord[];
  r?: Reject[];
  f?: { reason: string; detail?: string };
}

/** Cuts a torn last line (no trailing newline) off a part file. Returns the bytes removed. */
export function repairTail(path: string): number {
  const fd = openSync(path, "r+");
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return 0;
    const chunk = Buffer.alloc(Math.min(size, 1 << 16));
    let end = size;
    // walk back to the last newline
    while (end > 0) {
      const start = Math.max(0, end - chunk.length);
      const n = readSync(fd, chunk, 0, end - start, start);
      const at = chunk.subarray(0, n).lastIndexOf(10);
      if (at >= 0) {
        const keep = start + at + 1;
        if (keep !== size) ftruncateSync(fd, keep);
        return size - keep;
      }
      end = start;
    }
    ftruncateSync(fd, 0);
    return size;
  } finally {
    closeSync(fd);
  }
}

export async function* readEntries(path: string): AsyncGenerator<Entry> {
  const lines = createInterface({
    input: createReadStream(path, { highWaterMark: 1 << 20 }),
    crlfDelay: Infinity,
  });
  let n = 0;
  for await (const line of lines) {
    n++;
    if (line.length === 0) continue;
    try {
      yield JSON.parse(line) as Entry;
    } catch {
      // only a torn final line can be malformed, and it is repaired before reading; anything else is damage
      throw new Error(
        `${path}:${n}: damaged entry; run \`pnpm pipeline reset\` on this stage to recompute it`,
      );
    }
  }
}

/**
 * Buffers entries and appends them with one write per flush. A flush happens when the buffer is large
 * or `flushMs` after the first buffered entry; `fsyncMs` bounds what a power loss can take back.
 */
export class PartWriter {
  private fd: number;
  private buffer: string[] = [];
  private bytes = 0;
  private timer: NodeJS.Timeout | undefined;
  private lastSync = Date.now();

  constructor(
    readonly path: string,
    private readonly options: { flushMs?: number; maxBufferBytes?: number; fsyncMs?: number } = {},
  ) {
    this.fd = openSync(path, "a");
  }

  append(entry: Entry): void {
    const line = `${JSON.stringify(entry)}\n`;
    this.buffer.push(line);
    this.bytes += line.length;
    if (this.bytes >= (this.options.maxBufferBytes ?? 1 << 18)) this.flush();
    else if (!this.timer) this.timer = setTimeout(() => this.flush(), this.options.flushMs ?? 100);
  }

  flush(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.buffer.length === 0) return;
    const data = this.buffer.join("");
    this.buffer = [];
    this.bytes = 0;
    writeSync(this.fd, data);
    if (Date.now() - this.lastSync >= (this.options.fsyncMs ?? 2000)) {
      fsyncSync(this.fd);
      this.lastSync = Date.now();
    }
  }

  close(): void {
    this.flush();
    fsyncSync(this.fd);
    closeSync(this.fd);
  }
}
