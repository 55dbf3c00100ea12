// What the sandbox said, kept with the dialogue. The LLM cache replays the model's side of a dialogue
// after a `kill -9`; this journal replays the sandbox's side, so a redone record shows the same
// execution results (output with a timestamp, a random number, a time-out at the edge of the limit)
// and therefore sends the same conversations, which the LLM cache then answers for free.
//
// Append-only JSON lines under the stage's work dir, one line per run, keyed by the record and by
// everything the run depended on (the conversation before it, the code, the language, the limits).
// Appended before the result is used, so no later request can have seen a result the journal lacks.
// Each process appends to a file of its own (a segment: `<time>-<pid>.jsonl`), made at its first run,
// and indexes every segment once, when it opens its first record (where each record's lines lie, not
// their text, so a shard's memory grows by a few dozen bytes a run whatever the runs say, other shards'
// included; a record's lines are read when it opens): a file per record cost the stage an
// inode a record, which ext4 takes ~0.5 ms of CPU to allocate where many files were deleted lately.
// Shards of any count share the dir, each writing its own segment. A line torn by a kill is skipped
// on reading; the next process writes a segment of its own. Appended synchronously: a small append
// takes tens of microseconds, a third of what the same calls cost through libuv's thread pool.
// `reset --purge` forgets the journal; a forced rerun replays it as it replays cached LLM answers.
// Journals written before segments (a file per record, `<sha1(id)[0,2]>/<sha1(id)>.jsonl`) are still
// read, for a run resumed across the change.
//
// A segment line is the record id as a JSON string, a tab, then the entry: `{key, run, x?}`, where `x`
// keeps what the run cost in the sandbox (programs and busy time), so a redone record that replays it
// counts it as the run that made it did (the manifest's `sandbox`), once. (JSON escapes tabs: the
// first one ends the id, and the id is all a process reads of the lines of records it never opens.)
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
import type { ExecutionStatus } from "../../pipeline/execution/index.js";
import { ReplayCosts, type SandboxUsage } from "../../pipeline/usage.js";

/** One sandbox run as the dialogue uses it: what happened, and the feedback turn it was rendered to. */
export interface JournaledRun {
  status: ExecutionStatus;
  exitCode: number | null;
  signal: string | null;
  timeS: number | null;
  truncated: boolean;
  message?: string;
  /** the "Execution result:" turn */
  feedback: string;
  /** the last characters of the error output (stderr, else stdout), for naming the error */
  errorTail: string;
}

interface Entry {
  key: string;
  run: JournaledRun;
  x?: unknown;
}

const SEGMENT = /^\d+-\d+(-\d+)?\.jsonl$/;
const LEGACY_DIR = /^[0-9a-f]{2}$/;
const TAB = 0x09;
const NEWLINE = 0x0a;

/** Where an entry's JSON lies: a segment's path and the bytes [start, end) in it. */
interface Place {
  file: string;
  start: number;
  end: number;
}

export class ExecutionJournal {
  /** record id -> where its entries lie, in the order written; indexed from every segment at the first open */
  private places: Map<string, Place[]> | undefined;
  /** whether the dir holds per-record files of the layout before segments */
  private legacy = false;
  /** this process's segment, made at its first run, and its length in bytes */
  private segment: { file: string; size: number } | undefined;

  constructor(readonly dir: string) {}

  async open(recordId: string): Promise<RecordJournal> {
    const runs = new Map<string, JournaledRun>();
    const costs = new ReplayCosts();
    const load = (json: string) => {
      try {
        const entry = JSON.parse(json) as Entry;
        runs.set(entry.key, entry.run);
        costs.loaded(entry.key, entry.x);
      } catch {
        // torn by a kill while appending: that run is simply done again
      }
    };
    const places = this.index();
    if (this.legacy) for (const line of this.legacyLines(recordId)) load(line);
    for (const json of readPlaces(places.get(recordId) ?? [])) load(json);
    return new RecordJournal(recordId, runs, costs, this);
  }

  /** Appends a run of `recordId` to this process's segment, and to what later opens here read. */
  append(recordId: string, entry: Entry): void {
    const id = JSON.stringify(recordId);
    const json = JSON.stringify(entry);
    const line = `${id}\t${json}\n`;
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
    const start = this.segment.size + Buffer.byteLength(id) + 1;
    const end = start + Buffer.byteLength(json);
    this.segment.size = end + 1;
    place(this.index(), recordId, { file: this.segment.file, start, end });
  }

  /** A new, empty segment: made exclusively, so no other journal (this process's too) appends to it. */
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
    // segments in the order they were started: a later line for a key wins
    const segments = names.filter((n) => SEGMENT.test(n)).sort((a, b) => segmentTime(a) - segmentTime(b));
    for (const name of segments) {
      const file = path.join(this.dir, name);
      const bytes = readFileSync(file);
      for (let at = 0; at < bytes.length; ) {
        const newline = bytes.indexOf(NEWLINE, at);
        const end = newline < 0 ? bytes.length : newline;
        const tab = bytes.indexOf(TAB, at);
        if (tab >= 0 && tab < end) {
          let id: unknown;
          try {
            id = JSON.parse(bytes.toString("utf8", at, tab));
          } catch {
            id = undefined;
          }
          if (typeof id === "string") place(places, id, { file, start: tab + 1, end });
        }
        at = end + 1;
      }
    }
    this.legacy = names.some((n) => LEGACY_DIR.test(n));
    this.places = places;
    return places;
  }

  /** The lines of a record's own file, in the layout before segments. */
  private legacyLines(recordId: string): string[] {
    const name = createHash("sha1").update(recordId).digest("hex");
    try {
      return readFileSync(path.join(this.dir, name.slice(0, 2), `${name}.jsonl`), "utf8").split("\n");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      return [];
    }
  }
}

function place(places: Map<string, Place[]>, id: string, at: Place): void {
  const known = places.get(id);
  if (known) known.push(at);
  else places.set(id, [at]);
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

function segmentTime(name: string): number {
  return Number(name.slice(0, name.indexOf("-")));
}

export class RecordJournal {
  constructor(
    private readonly recordId: string,
    private readonly runs: Map<string, JournaledRun>,
    /** what the runs read back from the journal cost, not yet counted by this record */
    private readonly costs: ReplayCosts,
    private readonly journal: ExecutionJournal,
  ) {}

  get(key: string): JournaledRun | undefined {
    return this.runs.get(key);
  }

  /**
   * What the sandbox ran for the run under `key` when an earlier process made it, the first time this
   * record replays it; nothing after that, nor for a run this record made (counted as it ran).
   */
  replayCost(key: string): SandboxUsage | undefined {
    return this.costs.take(key);
  }

  /** Appends a run, with `cost`: what the sandbox ran for it. */
  async put(key: string, run: JournaledRun, cost?: SandboxUsage): Promise<void> {
    this.runs.set(key, run);
    this.costs.made(key);
    this.journal.append(this.recordId, { key, run, ...(cost ? { x: cost } : {}) });
  }
}

/** A run as a dialogue's meta shows it (simulate's executions, correct's mistake and fix). */
export function runMeta(run: JournaledRun) {
  return { status: run.status, exit_code: run.exitCode, time_s: run.timeS, truncated: run.truncated };
}

/** The journal key of a run: a digest of everything its result depends on. */
export function runKey(parts: unknown): string {
  return createHash("sha256").update(JSON.stringify(parts)).digest("hex");
}

/** The line of a failed run that names its error (Node and Java put a stack trace after it). */
export function errorLine(run: Pick<JournaledRun, "errorTail" | "status">): string {
  if (run.status === "timeout") return "timed out";
  const lines = run.errorTail.split("\n").map((l) => l.trim());
  const named = lines.filter((l) => /\b\w*(?:Error|Exception)\b|\berror\b/i.test(l) && !/^at\s/.test(l));
  return (named.at(-1) ?? lines.filter((l) => l !== "").at(-1) ?? "").slice(0, 300);
}
