// Sandbox results a stage keeps in its work dir, so that a run after a kill -9, a failure or --force
// replays what the sandbox said instead of running it again: the same outputs, no program run twice.
// Results are keyed by everything they depend on and grouped (a record's runs; one group for a
// global stage). Each process appends to a segment of its own, `<time>-<pid>.jsonl`, whose lines are
// the group as a JSON string, a tab, then `{"k": key, "v": value}`; a later line for a key wins.
import { createHash } from "node:crypto";
import {
  appendFileSync,
  closeSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";

const SEGMENT = /^\d+-\d+(-\d+)?\.jsonl$/;
const TAB = 0x09;
const NEWLINE = 0x0a;

/** Where a line's entry lies: a segment's path and the bytes [start, end) in it. */
interface Place {
  file: string;
  start: number;
  end: number;
}

/** The key of a result: a digest of everything it depends on. */
export function resultKey(parts: unknown): string {
  return createHash("sha256").update(JSON.stringify(parts)).digest("hex");
}

export class KeptResults<V> {
  /**
   * group -> where its entries lie, in the order written: indexed from every segment at the first
   * open, places and not values, so memory grows by a few dozen bytes a result whatever it says
   */
  private places: Map<string, Place[]> | undefined;
  /** this process's segment, made at its first put, and its length in bytes */
  private segment: { file: string; size: number } | undefined;

  constructor(readonly dir: string) {}

  /** The results kept under `group`, as every segment holds them now. */
  open(group: string): KeptGroup<V> {
    const values = new Map<string, V>();
    for (const json of readPlaces(this.index().get(group) ?? [])) {
      try {
        const entry = JSON.parse(json) as { k?: unknown; v?: V } | null;
        if (typeof entry?.k === "string" && entry.v !== undefined) values.set(entry.k, entry.v);
      } catch {
        // torn by a kill while appending: that result is simply made again
      }
    }
    return new KeptGroup(this, group, values);
  }

  /** Appends a result to this process's segment, and to what later opens here read. */
  append(group: string, key: string, value: V): void {
    const name = JSON.stringify(group);
    const json = JSON.stringify({ k: key, v: value });
    const line = `${name}\t${json}\n`;
    this.segment ??= this.newSegment();
    try {
      appendFileSync(this.segment.file, line);
    } catch (error) {
      // a failed append may have left part of the line: the next one goes to a segment of its own
      this.segment = undefined;
      // the dir went away since the segment was made (a purge of the work dir): start another
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      this.segment = this.newSegment();
      appendFileSync(this.segment.file, line);
    }
    const start = this.segment.size + Buffer.byteLength(name) + 1;
    const end = start + Buffer.byteLength(json);
    this.segment.size = end + 1;
    place(this.index(), group, { file: this.segment.file, start, end });
  }

  /** A new, empty segment, made exclusively: no other process (nor store here) appends to it. */
  private newSegment(): { file: string; size: number } {
    mkdirSync(this.dir, { recursive: true });
    const started = Date.now();
    for (let n = 0; ; n++) {
      const file = path.join(this.dir, `${started}-${process.pid}${n ? `-${n}` : ""}.jsonl`);
      try {
        writeFileSync(file, "", { flag: "wx" });
        return { file, size: 0 };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
    }
  }

  private index(): Map<string, Place[]> {
    if (this.places) return this.places;
    const places = new Map<string, Place[]>();
    let names: string[] = [];
    try {
      names = readdirSync(this.dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
    const segments = names.filter((n) => SEGMENT.test(n)).sort((a, b) => segmentOrder(a, b));
    for (const name of segments) {
      const file = path.join(this.dir, name);
      const bytes = readFileSync(file);
      for (let at = 0; at < bytes.length; ) {
        const newline = bytes.indexOf(NEWLINE, at);
        const end = newline < 0 ? bytes.length : newline;
        const tab = bytes.indexOf(TAB, at);
        // JSON escapes tabs: the first one ends the group
        if (tab >= 0 && tab < end) {
          let group: unknown;
          try {
            group = JSON.parse(bytes.toString("utf8", at, tab));
          } catch {
            group = undefined;
          }
          if (typeof group === "string") place(places, group, { file, start: tab + 1, end });
        }
        at = end + 1;
      }
    }
    this.places = places;
    return places;
  }
}

/** One group's results: read when it was opened, and those put since. */
export class KeptGroup<V> {
  constructor(
    private readonly store: KeptResults<V>,
    private readonly group: string,
    private readonly values: Map<string, V>,
  ) {}

  get(key: string): V | undefined {
    return this.values.get(key);
  }

  /** Keeps a result, appended before it is used, so nothing later can have seen one the store lacks. */
  put(key: string, value: V): void {
    this.values.set(key, value);
    this.store.append(this.group, key, value);
  }
}

function place(places: Map<string, Place[]>, group: string, at: Place): void {
  const known = places.get(group);
  if (known) known.push(at);
  else places.set(group, [at]);
}

/** The entries' JSON at these places, read from their segments (none from a segment purged since). */
function readPlaces(places: Place[]): string[] {
  const texts: string[] = [];
  const fds = new Map<string, number | undefined>();
  try {
    for (const at of places) {
      if (!fds.has(at.file)) fds.set(at.file, openIfThere(at.file));
      const fd = fds.get(at.file);
      if (fd === undefined) continue;
      const bytes = Buffer.alloc(at.end - at.start);
      const read = readSync(fd, bytes, 0, bytes.length, at.start);
      texts.push(bytes.toString("utf8", 0, read));
    }
  } finally {
    for (const fd of fds.values()) if (fd !== undefined) closeSync(fd);
  }
  return texts;
}

function openIfThere(file: string): number | undefined {
  try {
    return openSync(file, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    return undefined;
  }
}

/** Segments in the order they were made: by start time, then (one process's, in one ms) by number. */
function segmentOrder(a: string, b: string): number {
  const [timeA, , nA = "0"] = a.slice(0, -".jsonl".length).split("-");
  const [timeB, , nB = "0"] = b.slice(0, -".jsonl".length).split("-");
  return Number(timeA) - Number(timeB) || Number(nA) - Number(nB);
}
