// Which filtered records a dialogue stage works on: those whose language the stage takes (by default
// every language the sandbox runs), and of those a seeded sample of `count` when a count is set. The
// sample is the `count` records with the smallest hash of (seed, id): the same for the same seed and
// input on every run, independent of the input's order, and stable when records are added (a record
// in the sample stays in it unless a smaller hash displaces it). Records come out in upstream order,
// as the runner's resume-by-position needs. The sample is chosen from the filter's index (each
// output's id and language: pipeline/store/output-index.ts) and only its records are read, by
// offset, so a stage that takes 500 of 150K filtered records reads 500 lines, not 680 MB.
import { hash } from "node:crypto";
import { canonicalLanguage, type LanguageName } from "../../pipeline/code/index.js";
import { runnable } from "../../pipeline/execution/index.js";
import type { PipelineRecord } from "../../pipeline/record.js";
import { NotInShard, type StageIndex } from "../../pipeline/stage.js";
import type { IndexRow } from "../../pipeline/store/index.js";

export interface Selection {
  /** `runnable`: every language the sandbox runs; or a list of language names */
  languages: "runnable" | readonly string[];
  /** at most this many records; unset: every record of the languages */
  count?: number | undefined;
  seed: number;
}

/** The record's language if the selection takes it. */
export function selectedLanguage(
  record: Readonly<Record<string, unknown>>,
  selection: Selection,
): LanguageName | undefined {
  const lang = canonicalLanguage(typeof record.lang === "string" ? record.lang : undefined);
  if (!lang || !runnable(lang)) return undefined;
  if (selection.languages === "runnable") return lang;
  return selection.languages.some((l) => canonicalLanguage(l) === lang) ? lang : undefined;
}

function sampleKey(seed: number, id: string): string {
  return hash("sha256", `${seed}\n${id}`).slice(0, 16);
}

interface Candidate {
  key: string;
  id: string;
  /** its place among the rows of the selection's languages, in upstream order */
  at: number;
}

/** a before b in the sample's order: the smaller hash, then the smaller id */
const before = (a: Candidate, b: Candidate) => a.key < b.key || (a.key === b.key && a.id < b.id);

/**
 * The `count` rows with the smallest keys, as a max-heap: the root is the one the next smaller key
 * displaces, so choosing holds `count` candidates, never every row's key.
 */
class Sample {
  private readonly heap: Candidate[] = [];

  constructor(private readonly count: number) {}

  offer(candidate: Candidate): void {
    const { heap } = this;
    if (heap.length < this.count) {
      heap.push(candidate);
      this.up(heap.length - 1);
    } else if (heap.length > 0 && before(candidate, heap[0]!)) {
      heap[0] = candidate;
      this.down(0);
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

/** The fields of the upstream's index the selection reads. */
export const SELECTION_FIELDS = ["lang"] as const;

/** The rows of the upstream's index the selection takes, in upstream order. */
export function chooseRows(rows: readonly IndexRow[], selection: Selection): IndexRow[] {
  const taken = rows.filter((row) => selectedLanguage(row.fields, selection));
  const { count } = selection;
  if (count === undefined || taken.length <= count) return taken;
  const sample = new Sample(count);
  for (const [at, row] of taken.entries())
    sample.offer({ key: sampleKey(selection.seed, row.id), id: row.id, at });
  return [...sample.candidates].sort((a, b) => a.at - b.at).map((c) => taken[c.at]!);
}

/**
 * A sample's records, in upstream order, each read by its offset. `inShard`: a shard's test, whose
 * other shards' records are passed over unread, as counts (their positions still count).
 */
export async function* sampleRecords(
  index: StageIndex,
  rows: readonly IndexRow[],
  inShard?: (record: PipelineRecord) => boolean,
): AsyncIterable<PipelineRecord | NotInShard> {
  if (!inShard) {
    yield* index.records(rows);
    return;
  }
  const mine = rows.filter((row) => inShard({ id: row.id }));
  const records = index.records(mine)[Symbol.asyncIterator]();
  let others = 0;
  let next = 0;
  for (const row of rows) {
    if (row !== mine[next]) {
      others++;
      continue;
    }
    next++;
    if (others > 0) yield new NotInShard(others);
    others = 0;
    const record = await records.next();
    if (record.done) throw new Error(`the index read fewer records than it names (${row.id})`);
    yield record.value;
  }
  if (others > 0) yield new NotInShard(others);
}

/**
 * Without a count: every record of the selection's languages, as the upstream streams them (from its
 * first record, and with less work than a read per line).
 */
export async function* languageRecords(
  read: () => AsyncIterable<PipelineRecord>,
  selection: Selection,
): AsyncIterable<PipelineRecord> {
  for await (const record of read()) {
    if (selectedLanguage(record, selection)) yield record;
  }
}
