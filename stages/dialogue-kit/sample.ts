// Which filtered records a dialogue stage works on: those whose language the stage takes (by default
// every language the sandbox runs), and of those a seeded sample of `count` when a count is set. The
// sample is the `count` records with the smallest hash of (seed, id): the same for the same seed and
// input on every run, independent of the input's order, and stable when records are added (a record
// in the sample stays in it unless a smaller hash displaces it). Records come out in upstream order,
// as the runner's resume-by-position needs.
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

/** One pass over the upstream: how many records the selection takes and, with a count, which. */
export interface Chosen {
  size: number;
  /** the sample's ids; undefined without a count (every record of the languages) */
  ids: Set<string> | undefined;
}

export async function chooseRecords(
  read: () => AsyncIterable<PipelineRecord>,
  selection: Selection,
): Promise<Chosen> {
  const { count } = selection;
  const keyed: { key: string; id: string }[] = [];
  let n = 0;
  for await (const record of read()) {
    if (!selectedLanguage(record, selection)) continue;
    n++;
    if (count !== undefined) keyed.push({ key: sampleKey(selection.seed, record.id), id: record.id });
  }
  if (count === undefined) return { size: n, ids: undefined };
  keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.id < b.id ? -1 : 1));
  return { size: Math.min(n, count), ids: new Set(keyed.slice(0, count).map((k) => k.id)) };
}

/**
 * The selected records, in upstream order. `chosen`: the pass that counted them, where the caller
 * made one already (the progress total): with a count, its sample is used instead of reading the
 * upstream once more for it.
 */
export async function* selectRecords(
  read: () => AsyncIterable<PipelineRecord>,
  selection: Selection,
  chosen: () => Promise<Chosen> = () => chooseRecords(read, selection),
): AsyncIterable<PipelineRecord> {
  const ids = selection.count === undefined ? undefined : (await chosen()).ids;
  for await (const record of read()) {
    if (!selectedLanguage(record, selection)) continue;
    if (ids && !ids.has(record.id)) continue;
    yield record;
  }
}
