// Which filtered records a dialogue stage works on: those whose language the stage takes (by default
// every language the sandbox runs), and of those a seeded sample of `count` when a count is set. The
// sample is the `count` records with the smallest hash of (seed, id): the same for the same seed and
// input on every run, independent of the input's order, and stable when records are added (a record
// in the sample stays in it unless a smaller hash displaces it). Records come out in upstream order,
// as the runner's resume-by-position needs. The pass that chooses the sample keeps its records when
// they fit in memory, so a stage that takes 500 of 150K filtered records reads its upstream once.
import { createHash } from "node:crypto";
import { canonicalLanguage, type LanguageName } from "../../pipeline/code/index.js";
import { runnable } from "../../pipeline/execution/index.js";
import type { PipelineRecord } from "../../pipeline/record.js";

export interface Selection {
  /** `runnable`: every language the sandbox runs; or a list of language names */
  languages: "runnable" | readonly string[];
  /** at most this many records; unset: every record of the languages */
  count?: number | undefined;
  seed: number;
}

/** The record's language if the selection takes it. */
export function selectedLanguage(record: PipelineRecord, selection: Selection): LanguageName | undefined {
  const lang = canonicalLanguage(typeof record.lang === "string" ? record.lang : undefined);
  if (!lang || !runnable(lang)) return undefined;
  if (selection.languages === "runnable") return lang;
  return selection.languages.some((l) => canonicalLanguage(l) === lang) ? lang : undefined;
}

function sampleKey(seed: number, id: string): string {
  return createHash("sha256").update(`${seed}\n${id}`).digest("hex").slice(0, 16);
}

/**
 * The sample's records are kept from the pass that chooses them while they take at most this much
 * memory, so the stage reads its upstream once; a larger sample is read again (its ids only kept).
 */
export const SAMPLE_MEMORY_BYTES = 256 * 2 ** 20;

/** One pass over the upstream: how many records the selection takes and, with a count, which. */
export interface Chosen {
  size: number;
  /** the sample's ids; undefined without a count (every record of the languages) */
  ids: Set<string> | undefined;
  /** the sample itself, in upstream order, where it fitted in SAMPLE_MEMORY_BYTES */
  records?: PipelineRecord[];
}

interface Candidate {
  key: string;
  id: string;
  /** its place among the records of the selection's languages, in upstream order */
  at: number;
  record: PipelineRecord | undefined;
  bytes: number;
}

/** a before b in the sample's order: the smaller hash, then the smaller id */
const before = (a: Candidate, b: Candidate) => a.key < b.key || (a.key === b.key && a.id < b.id);

/** A record's size in memory, roughly: its strings at two bytes a character, and a word for the rest. */
function approxBytes(value: unknown, depth = 0): number {
  if (typeof value === "string") return 2 * value.length + 16;
  if (value === null || typeof value !== "object" || depth > 4) return 16;
  let bytes = 32;
  for (const item of Array.isArray(value) ? value : Object.values(value))
    bytes += approxBytes(item, depth + 1);
  return bytes;
}

/**
 * The `count` records with the smallest keys, as a max-heap: the root is the one the next smaller key
 * displaces, so the pass holds `count` candidates, never the whole upstream's keys.
 */
class Sample {
  private readonly heap: Candidate[] = [];
  private bytes = 0;
  /** false once the records outgrew `budget`: from then on only their ids are kept */
  keeping = true;

  constructor(
    private readonly count: number,
    private readonly budget: number,
  ) {}

  offer(candidate: Candidate): void {
    const { heap } = this;
    if (heap.length < this.count) {
      heap.push(candidate);
      this.up(heap.length - 1);
    } else if (heap.length > 0 && before(candidate, heap[0]!)) {
      this.bytes -= heap[0]!.bytes;
      heap[0] = candidate;
      this.down(0);
    } else return;
    if (!this.keeping) {
      candidate.record = undefined;
      return;
    }
    this.bytes += candidate.bytes;
    if (this.bytes > this.budget) {
      this.keeping = false;
      for (const c of heap) c.record = undefined;
    }
  }

  get candidates(): readonly Candidate[] {
    return this.heap;
  }

  private up(i: number): void {
    const { heap } = this;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[parent]!, heap[i]!)) return;
      [heap[parent], heap[i]] = [heap[i]!, heap[parent]!];
      i = parent;
    }
  }

  private down(i: number): void {
    const { heap } = this;
    for (;;) {
      const left = 2 * i + 1;
      let largest = i;
      if (left < heap.length && before(heap[largest]!, heap[left]!)) largest = left;
      if (left + 1 < heap.length && before(heap[largest]!, heap[left + 1]!)) largest = left + 1;
      if (largest === i) return;
      [heap[largest], heap[i]] = [heap[i]!, heap[largest]!];
      i = largest;
    }
  }
}

/**
 * One pass over the upstream: how many records the selection takes and, with a count, which, with
 * the records themselves where they fit in `memoryBytes` (then `selectRecords` reads nothing more).
 * `signal` ends a pass without a count early (its total is then a part).
 */
export async function chooseRecords(
  read: () => AsyncIterable<PipelineRecord>,
  selection: Selection,
  memoryBytes = SAMPLE_MEMORY_BYTES,
  signal?: AbortSignal,
): Promise<Chosen> {
  const { count } = selection;
  const sample = count === undefined ? undefined : new Sample(count, memoryBytes);
  let n = 0;
  for await (const record of read()) {
    // without a count the pass is only the progress total, counted beside the stage's own read: it
    // stops with the stage (a sample is the input, and is never cut short)
    if (!sample && signal?.aborted) break;
    if (!selectedLanguage(record, selection)) continue;
    if (sample) {
      const keep = sample.keeping;
      sample.offer({
        key: sampleKey(selection.seed, record.id),
        id: record.id,
        at: n,
        record: keep ? record : undefined,
        bytes: keep ? approxBytes(record) : 0,
      });
    }
    n++;
  }
  if (count === undefined || !sample) return { size: n, ids: undefined };
  const chosen = sample.candidates;
  const ids = new Set(chosen.map((c) => c.id));
  if (!sample.keeping) return { size: chosen.length, ids };
  const records = [...chosen].sort((a, b) => a.at - b.at).map((c) => c.record!);
  return { size: chosen.length, ids, records };
}

/**
 * The selected records, in upstream order. `chosen`: the pass that counted them, where the caller
 * made one already (the progress total): with a count, its sample is used instead of reading the
 * upstream once more for it, and where it kept the records, they are the input.
 */
export async function* selectRecords(
  read: () => AsyncIterable<PipelineRecord>,
  selection: Selection,
  chosen: () => Promise<Chosen> = () => chooseRecords(read, selection),
): AsyncIterable<PipelineRecord> {
  const pass = selection.count === undefined ? undefined : await chosen();
  if (pass?.records) {
    yield* pass.records;
    return;
  }
  const ids = pass?.ids;
  for await (const record of read()) {
    if (!selectedLanguage(record, selection)) continue;
    if (ids && !ids.has(record.id)) continue;
    yield record;
  }
}
