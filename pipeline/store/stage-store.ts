// One stage's corner of the data dir, `<dataDir>/<stage>/`: manifest.json (what produced the outputs,
// state, counts, usage, timings), parts/*.jsonl (committed entries: outputs, rejects, failures;
// append-only), work/ (the stage's private files, kept by `reset`), lock (held by the process running
// the stage), and shards/K-of-N/ (shard K of N, with a manifest.json, parts/ and lock of its own).
import { hash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { basename, join } from "node:path";
import { diskFull, UserError } from "../errors.js";
import { processAlive } from "../pid.js";
import type { PipelineRecord, Reject } from "../record.js";
import { DoneSet } from "./done-set.js";
import { type Manifest, readManifest, type StageCounts, syncDir, writeManifest } from "./manifest.js";
import { buildIndex, type IndexOptions, type IndexRow, loadIndex, saveIndex } from "./output-index.js";
import { PartWriter, readEntries, repairTail, StoreError } from "./parts.js";
import { damagedStage, PartHashCheck, type PartSeal, sealMismatch, sealParts } from "./seal.js";
import { SHARDS_DIR, type ShardSpec, shardLabel } from "./shard-dirs.js";
import { Tally } from "./tally.js";

interface ScanResult {
  done: DoneSet;
  /** `failed`: the inputs whose last entry is a failure */
  counts: StageCounts;
  /** the running digests, to continue adding outputs and rejects of this run */
  digest: OutputDigest;
  rejectsDigest: OutputDigest;
  /** the committed entries' counters and reject reasons, to continue counting in this run */
  tally: Tally;
}

/** Order-independent digest of a set of records: resumed and uninterrupted runs hash the same. */
export class OutputDigest {
  private sum = 0n;
  private n = 0;
  add(record: unknown): void {
    this.addJson(JSON.stringify(record));
  }
  /** The same as `add(record)` for the record's `JSON.stringify` text. */
  readonly addJson = (json: string): void => {
    // one call and no Hash object per record: 40% less time than createHash().update().digest()
    this.sum = (this.sum + BigInt(`0x${hash("sha1", json).slice(0, 16)}`)) & 0xffffffffffffffffn;
    this.n++;
  };
  get value(): string {
    return `${this.n.toString(16)}-${this.sum.toString(16).padStart(16, "0")}`;
  }
}

/**
 * The digest of the union of disjoint record sets, from their digests: counts add and sums add, so
 * the shards of a stage hash exactly as one process computing all of it would.
 */
export function combineDigests(values: readonly string[]): string {
  let sum = 0n;
  let n = 0;
  for (const value of values) {
    const match = /^([0-9a-f]+)-([0-9a-f]{16})$/.exec(value);
    if (!match) throw new Error(`not an output digest: ${value}`);
    n += Number.parseInt(match[1]!, 16);
    sum = (sum + BigInt(`0x${match[2]}`)) & 0xffffffffffffffffn;
  }
  return `${n.toString(16)}-${sum.toString(16).padStart(16, "0")}`;
}

export class StageStore {
  readonly dir: string;
  readonly partsDir: string;
  readonly workDir: string;

  constructor(
    readonly dataDir: string,
    readonly stage: string,
    /** shard K of N: the store is `<stage>/shards/K-of-N/`, with the stage's `work/` */
    readonly shard?: ShardSpec,
  ) {
    const stageDir = join(dataDir, stage);
    this.dir = shard ? join(stageDir, SHARDS_DIR, shardLabel(shard)) : stageDir;
    this.partsDir = join(this.dir, "parts");
    this.workDir = join(stageDir, "work");
  }

  /** `<stage>` or `<stage> shard K/N`, for messages. */
  get label(): string {
    return this.shard ? `${this.stage} shard ${this.shard.index}/${this.shard.count}` : this.stage;
  }

  manifest(): Manifest | undefined {
    return readManifest(this.dir);
  }

  saveManifest(manifest: Manifest): void {
    mkdirSync(this.dir, { recursive: true });
    // sealed once, when it completes: from then on its parts never change
    const sealed = manifest.state === "complete" && !manifest.parts ? { parts: sealParts(this.parts()) } : {};
    writeManifest(this.dir, { ...manifest, ...sealed, updatedAt: new Date().toISOString() });
  }

  parts(): string[] {
    if (!existsSync(this.partsDir)) return [];
    return readdirSync(this.partsDir)
      .filter((f) => /^part-\d+\.jsonl$/.test(f))
      .sort()
      .map((f) => join(this.partsDir, f));
  }

  /** Repairs torn tails and rebuilds what is done from the committed entries. */
  async scan(): Promise<ScanResult> {
    const done = new DoneSet();
    const failedAt = new Set<number>();
    const counts: StageCounts = { in: 0, out: 0, rejected: 0, failed: 0 };
    const digest = new OutputDigest();
    const rejectsDigest = new OutputDigest();
    const tally = new Tally();
    for (const part of this.parts()) {
      repairTail(part);
      for await (const entry of readEntries(part)) {
        if (entry.f) {
          if (entry.s >= 0 && !done.has(entry.s)) failedAt.add(entry.s);
          continue;
        }
        if (entry.s >= 0) {
          if (done.has(entry.s)) continue;
          done.add(entry.s);
          failedAt.delete(entry.s);
          counts.in++;
        }
        for (const record of entry.o ?? []) digest.add(record);
        for (const reject of entry.r ?? []) rejectsDigest.add(reject);
        counts.out += entry.o?.length ?? 0;
        counts.rejected += entry.r?.length ?? 0;
        tally.addEntry(entry);
      }
    }
    counts.failed = failedAt.size;
    return { done, counts, digest, rejectsDigest, tally };
  }

  /** A new part file for this run; earlier parts are never written again. */
  newPart(): PartWriter {
    mkdirSync(this.partsDir, { recursive: true });
    const last = this.parts().at(-1);
    const next = last ? Number(/part-(\d+)\.jsonl$/.exec(last)![1]) + 1 : 0;
    return new PartWriter(join(this.partsDir, `part-${String(next).padStart(5, "0")}.jsonl`));
  }

  /** Writes a global stage's outputs to a temporary part that becomes visible only when `commit` runs. */
  stagingPart(): { writer: PartWriter; commit(): void } {
    mkdirSync(this.partsDir, { recursive: true });
    const tmp = join(this.partsDir, "staging.jsonl.tmp");
    rmSync(tmp, { force: true });
    const writer = new PartWriter(tmp);
    return {
      writer,
      commit: () => {
        writer.close();
        for (const part of this.parts()) rmSync(part);
        renameSync(tmp, join(this.partsDir, "part-00000.jsonl"));
        syncDir(this.partsDir);
      },
    };
  }

  /** For `status`: how a complete stage's parts differ from its seal (sizes only); undefined if not. */
  damage(manifest: Manifest): string | undefined {
    if (manifest.state !== "complete" || !manifest.parts) return undefined;
    return sealMismatch(this.parts(), manifest.parts);
  }

  /** Streams the committed outputs (or rejects), each input's entry once. */
  async *read(options: { rejects?: boolean } = {}): AsyncGenerator<PipelineRecord> {
    for await (const entry of this.readOrdered(options)) yield* entry.items;
  }

  /**
   * `read`, an input at a time, each with its position in the whole stage's input (a shard's `g`):
   * the key that merges the shards of a stage in the order one process would have read them.
   */
  async *readOrdered(
    options: { rejects?: boolean } = {},
  ): AsyncGenerator<{ at: number; items: PipelineRecord[] }> {
    const seen = new DoneSet();
    const parts = this.parts();
    // a complete stage is read against its seal; a running or partial one has none yet
    const manifest = this.manifest();
    const seal = manifest?.state === "complete" ? manifest.parts : undefined;
    if (seal) this.checkSeal(parts, seal);
    let yielded = 0;
    for (const part of parts) {
      const sealed = seal?.find((p) => p.file === basename(part));
      const check = sealed ? new PartHashCheck(sealed) : undefined;
      // a running or killed stage may have a torn last line: read only the complete ones
      // an entry without the items asked for is not parsed, only its position marked as seen
      for await (const entry of readEntries(part, {
        completeOnly: true,
        want: options.rejects ? "r" : "o",
        ...(check ? { onBytes: check.add } : {}),
      })) {
        if (entry.f) continue;
        if (entry.s >= 0) {
          if (seen.has(entry.s)) continue;
          seen.add(entry.s);
        }
        if ("skipped" in entry) continue;
        const items: (PipelineRecord | Reject)[] | undefined = options.rejects ? entry.r : entry.o;
        if (items?.length) {
          yielded += items.length;
          yield { at: entry.g ?? entry.s, items: items as PipelineRecord[] };
        }
      }
      check?.verify(this.stage, this.dir);
    }
    // the seal lists no part when the records live elsewhere (a sharded stage's shards)
    if (manifest && seal && seal.length > 0) {
      const expected = options.rejects ? manifest.counts.rejected : manifest.counts.out;
      if (yielded !== expected) {
        const what = options.rejects ? "rejects" : "records";
        throw this.damaged(`its parts hold ${yielded} ${what} where its manifest counts ${expected}`);
      }
    }
  }

  /**
   * The complete stage's outputs, indexed with `fields` (output-index.ts): the saved index where it
   * was made from this seal, else one made now from the parts, checked against the seal and the
   * manifest's count as they are read, and saved for the next reader unless `save` is false.
   */
  async outputIndex(
    fields: readonly string[],
    options: IndexOptions = {},
  ): Promise<{ rows: IndexRow[]; paths: string[] }> {
    const manifest = this.manifest();
    if (manifest?.state !== "complete") {
      throw new StoreError(`${this.label} is not complete: its outputs cannot be indexed`);
    }
    const paths = this.parts();
    const seal = manifest.parts;
    if (seal) this.checkSeal(paths, seal);
    const saved = seal && loadIndex(this.partsDir, seal, fields);
    if (saved && saved.length === manifest.counts.out) return { rows: saved, paths };
    const built = await buildIndex(paths, fields);
    if (seal) {
      const changed = built.seal.find((part, i) => part.sha256 !== seal[i]!.sha256);
      if (changed) throw this.damaged(`part ${changed.file} differs from what its manifest recorded`);
      if (built.rows.length !== manifest.counts.out) {
        throw this.damaged(
          `its parts hold ${built.rows.length} records where its manifest counts ${manifest.counts.out}`,
        );
      }
      try {
        if (options.save !== false) saveIndex(this.partsDir, built, fields);
      } catch {
        // storage this process may only read: the index serves this run, and is made again next time
      }
    }
    return { rows: built.rows, paths };
  }

  private damaged(what: string): StoreError {
    return damagedStage(this.stage, this.dir, what);
  }

  private checkSeal(paths: readonly string[], seal: readonly PartSeal[]): void {
    const problem = sealMismatch(paths, seal);
    if (problem) throw this.damaged(problem);
  }

  /** Removes outputs and manifest; keeps `work/` (verified downloads, indexes) unless `purge`. */
  reset(options: { purge?: boolean } = {}): void {
    // manifest first: a kill between the two leaves "not started" plus orphan parts, which the next run
    // wipes; the other order could leave a "complete" manifest over missing parts
    rmSync(join(this.dir, "manifest.json"), { force: true });
    rmSync(this.partsDir, { recursive: true, force: true });
    // a stage's reset takes its shards with it; a shard's reset leaves the stage's work files alone
    if (!this.shard) rmSync(join(this.dir, SHARDS_DIR), { recursive: true, force: true });
    if (options.purge && !this.shard) rmSync(this.workDir, { recursive: true, force: true });
  }

  /** Takes the stage's lock; a lock left by a dead process is taken over. */
  lock(): () => void {
    mkdirSync(this.dir, { recursive: true });
    const path = join(this.dir, "lock");
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        writeFileSync(path, lockText(), { flag: "wx" });
        // release only our own lock: a stale-lock takeover by another process must not be undone
        return () => {
          try {
            if (readFileSync(path, "utf8") === lockText()) rmSync(path, { force: true });
          } catch {
            // already gone
          }
        };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST")
          throw diskFull(error, { name: this.label, dir: this.dir }) ?? error;
        const [pidText, host] = readFileSync(path, "utf8").split(" ");
        const holder = Number(pidText);
        const elsewhere = host !== undefined && host !== hostname();
        // a pid means nothing on another machine: there the manifest's heartbeat says whether it lives
        const alive = elsewhere
          ? isRunning(this.manifest())
          : Boolean(holder) && holder !== process.pid && processAlive(holder);
        if (alive) {
          throw new UserError(
            `${this.label} is being run by process ${holder}${elsewhere ? ` on ${host}` : ""}; wait for it or stop it before running it again ` +
              `(if no such run exists, e.g. after a reboot reused the pid, delete ${path})`,
          );
        }
        rmSync(path, { force: true });
      }
    }
    throw new UserError(`could not take the lock of stage ${this.stage} in ${this.dir}`);
  }
}

/** `pid host`: a shard's lock may be looked at from another machine, where the pid is meaningless. */
function lockText(): string {
  return `${process.pid} ${hostname()}`;
}

/**
 * A manifest that says running on another machine is believed while its heartbeat is fresh: a running
 * record-wise stage saves its manifest every 2 s, so a minute of silence means the process is gone.
 */
export const HEARTBEAT_MS = 60_000;

/** Whether the process that wrote this "running" manifest is still at it (from any machine). */
export function isRunning(manifest: Manifest | undefined, now = Date.now()): boolean {
  if (manifest?.state !== "running" || !manifest.pid) return false;
  if (manifest.host !== undefined && manifest.host !== hostname()) {
    return now - Date.parse(manifest.updatedAt) < HEARTBEAT_MS;
  }
  return manifest.pid !== process.pid && processAlive(manifest.pid);
}
