// Append-only JSONL parts. One line is one committed entry: the outcome of one input record (its
// outputs, rejects, or failure), written in a single append. A `kill -9` can only tear the last line,
// which `repairTail` cuts off on the next open; an input whose entry is missing is simply redone.
import { closeSync, fstatSync, fsyncSync, ftruncateSync, openSync, readSync, writeSync } from "node:fs";
import { open } from "node:fs/promises";
import { UserError } from "../errors.js";
import type { PipelineRecord, Reject } from "../record.js";

/** The data dir is damaged or cannot be written; the message says what to do. */
export class StoreError extends UserError {}

export interface Entry {
  /** input position (record-wise stages) or -1 (global stages) */
  s: number;
  /**
   * A shard's entries: the input's position in the whole stage's input (`s` counts only the shard's
   * own records). Reading a sharded stage merges its shards by it, in the order one process reads.
   */
  g?: number;
  o?: PipelineRecord[];
  r?: Reject[];
  f?: { reason: string; detail?: string };
  /** the counters the stage added (`ctx.stat`) while handling this input, committed with its outcome */
  t?: Record<string, number>;
}

/**
 * The entry as one JSONL line, byte for byte `JSON.stringify(entry)`, with each output serialised
 * once and handed to `onOutput` too (the stage's output digest hashes the same text, so no record
 * is serialised twice).
 */
export function entryLine(entry: Entry, onOutput?: (json: string) => void): string {
  if (!entry.o || !onOutput) return `${JSON.stringify(entry)}\n`;
  let line = `{"s":${JSON.stringify(entry.s)},`;
  if (entry.g !== undefined) line += `"g":${JSON.stringify(entry.g)},`;
  line += `"o":[`;
  for (let i = 0; i < entry.o.length; i++) {
    const json = JSON.stringify(entry.o[i]);
    onOutput(json);
    line += i ? `,${json}` : json;
  }
  line += "]";
  if (entry.r !== undefined) line += `,"r":${JSON.stringify(entry.r)}`;
  if (entry.f !== undefined) line += `,"f":${JSON.stringify(entry.f)}`;
  if (entry.t !== undefined) line += `,"t":${JSON.stringify(entry.t)}`;
  return `${line}}\n`;
}

/** Bytes of the file open as `fd` up to and including its last newline. */
function completeLength(fd: number): number {
  const size = fstatSync(fd).size;
  const chunk = Buffer.alloc(Math.min(size, 1 << 16));
  let end = size;
  while (end > 0) {
    const start = Math.max(0, end - chunk.length);
    const n = readSync(fd, chunk, 0, end - start, start);
    const at = chunk.subarray(0, n).lastIndexOf(10);
    if (at >= 0) return start + at + 1;
    end = start;
  }
  return 0;
}

/** Cuts a torn last line (no trailing newline) off a part file. Returns the bytes removed. */
export function repairTail(path: string): number {
  const fd = openSync(path, "r+");
  try {
    const size = fstatSync(fd).size;
    const keep = completeLength(fd);
    if (keep !== size) ftruncateSync(fd, keep);
    return size - keep;
  } finally {
    closeSync(fd);
  }
}

/** Bytes read at a time: a line longer than this is carried over into the next read. */
const CHUNK_BYTES = 1 << 20;

/**
 * Which entries a reader wants: `all`, or only those that may hold outputs (`o`) or rejects (`r`).
 * An entry that certainly holds none is not parsed: its position (and whether it is a failure) is
 * read from its first bytes, which `entryLine` always writes as `{"s":N,` (then `"g":N,` in a shard).
 */
export type EntryWant = "all" | "o" | "r";

/** An entry the reader did not parse, because it holds nothing the reader wants. */
export interface SkippedEntry {
  s: number;
  g?: number;
  /** it records a failure (a failed entry never marks its position done) */
  f: boolean;
  skipped: true;
}

const SKIP_PREFIX = /^\{"s":(-?\d+),(?:"g":(\d+),)?"(\w+)":/;

/**
 * The line's position when it holds no `"o":[` (or `"r":[`) anywhere: a quote inside a JSON string is
 * always escaped, so that text only ever appears as a key, and a line without it has no such items.
 * Undefined when the line must be parsed.
 */
function skippable(line: string, want: EntryWant): SkippedEntry | undefined {
  if (want === "all" || !line.endsWith("}") || line.includes(want === "o" ? '"o":[' : '"r":['))
    return undefined;
  const m = SKIP_PREFIX.exec(line);
  if (!m) return undefined;
  return {
    s: Number(m[1]),
    ...(m[2] !== undefined ? { g: Number(m[2]) } : {}),
    f: m[3] === "f",
    skipped: true,
  };
}

/**
 * Streams the entries of a part. `completeOnly` stops before a torn last line instead of failing on
 * it: for reading a stage that is running, or was killed and not yet resumed. `onBytes` sees every
 * byte read, in order (the seal's hash). With `want`, an entry that holds none of the wanted items
 * comes back as a `SkippedEntry`, unparsed.
 *
 * The file is read a megabyte at a time and cut at newline bytes (a UTF-8 character never contains
 * one), each chunk's complete lines decoded at once: less CPU than a line reader over a stream.
 */
export interface ReadEntriesOptions {
  completeOnly?: boolean;
  onBytes?: (chunk: Buffer) => void;
  /** told each line's byte offset, length (without its newline) and text just before its entry comes */
  onLine?: (offset: number, length: number, line: string) => void;
}

export function readEntries(path: string, options?: ReadEntriesOptions): AsyncGenerator<Entry>;
export function readEntries(
  path: string,
  options: ReadEntriesOptions & { want: EntryWant },
): AsyncGenerator<Entry | SkippedEntry>;
export async function* readEntries(
  path: string,
  options: ReadEntriesOptions & { want?: EntryWant } = {},
): AsyncGenerator<Entry | SkippedEntry> {
  const want = options.want ?? "all";
  const file = await open(path, "r");
  try {
    let end = Number.POSITIVE_INFINITY;
    if (options.completeOnly) {
      end = completeLength(file.fd);
      if (end === 0) return;
    }
    const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
    // the start of a line the chunks read so far have not finished: its pieces, joined once it ends
    // (a line of many megabytes is copied once, not once per chunk)
    let carry: Buffer[] = [];
    let offset = 0;
    let n = 0;
    const { onLine } = options;
    // the file offset of the next line, kept only for `onLine` (a line's bytes are counted from its text)
    let lineAt = 0;
    const parse = (line: string): Entry | SkippedEntry => {
      const skipped = skippable(line, want);
      if (skipped) return skipped;
      try {
        return JSON.parse(line) as Entry;
      } catch {
        // appends only ever tear the final line, which is cut off or skipped: anything else is outside damage
        throw new StoreError(
          `${path}:${n}: damaged entry (not written by this tool); run \`pnpm pipeline reset\` on this stage to recompute it`,
        );
      }
    };
    while (offset < end) {
      const { bytesRead } = await file.read(buffer, 0, Math.min(buffer.length, end - offset), offset);
      if (bytesRead === 0) break;
      offset += bytesRead;
      const chunk = buffer.subarray(0, bytesRead);
      options.onBytes?.(chunk);
      const last = chunk.lastIndexOf(10);
      if (last < 0) {
        carry.push(Buffer.from(chunk));
        continue;
      }
      const lines = (
        carry.length > 0
          ? Buffer.concat([...carry, chunk.subarray(0, last + 1)])
          : chunk.subarray(0, last + 1)
      ).toString("utf8");
      carry = last + 1 < bytesRead ? [Buffer.from(chunk.subarray(last + 1))] : [];
      let at = 0;
      for (let nl = lines.indexOf("\n"); nl >= 0; at = nl + 1, nl = lines.indexOf("\n", at)) {
        n++;
        if (nl === at) {
          lineAt++;
          continue;
        }
        const line = lines.slice(at, nl);
        if (onLine) {
          const bytes = Buffer.byteLength(line);
          onLine(lineAt, bytes, line);
          lineAt += bytes + 1;
        }
        yield parse(line);
      }
    }
    // a last line without its newline: what a line reader would have given (JSON.parse fails on a torn one)
    if (carry.length > 0) {
      n++;
      const line = Buffer.concat(carry).toString("utf8");
      onLine?.(lineAt, Buffer.byteLength(line), line);
      yield parse(line);
    }
  } finally {
    await file.close();
  }
}

/**
 * Buffers entries and appends them with one write per flush. A flush happens when the buffer holds
 * 256 KiB or 100 ms after the first buffered entry; an fsync at most every 2 s bounds what a power
 * loss can take back.
 */
export class PartWriter {
  private fd: number;
  private buffer: string[] = [];
  private bytes = 0;
  private timer: NodeJS.Timeout | undefined;
  private lastSync = Date.now();
  private error: StoreError | undefined;

  constructor(readonly path: string) {
    this.fd = openSync(path, "a");
  }

  /** `onOutput` gets each output's JSON, as written (see `entryLine`). */
  append(entry: Entry, onOutput?: (json: string) => void): void {
    if (this.error) throw this.error;
    const line = entryLine(entry, onOutput);
    this.buffer.push(line);
    this.bytes += line.length;
    if (this.bytes >= 1 << 18) this.flush();
    else if (!this.timer) this.timer = setTimeout(() => this.flush(), 100);
  }

  flush(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.buffer.length === 0 || this.error) return;
    const data = this.buffer.join("");
    this.buffer = [];
    this.bytes = 0;
    try {
      writeSync(this.fd, data);
      if (Date.now() - this.lastSync >= 2000) {
        fsyncSync(this.fd);
        this.lastSync = Date.now();
      }
    } catch (error) {
      // a timer flush has no caller to throw to: keep the error for the next append or close
      this.error = new StoreError(
        `cannot write ${this.path}: ${(error as Error).message}. Free disk space (or fix the data dir) and run the same command again to resume.`,
      );
    }
  }

  close(): void {
    this.flush();
    try {
      if (!this.error) fsyncSync(this.fd);
    } finally {
      closeSync(this.fd);
    }
    if (this.error) throw this.error;
  }
}
