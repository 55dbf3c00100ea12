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

export async function* selectRecords(
  read: () => AsyncIterable<PipelineRecord>,
  selection: Selection,
): AsyncIterable<PipelineRecord> {
  const chosen = selection.count === undefined ? undefined : await sampleIds(read, selection);
  for await (const record of read()) {
    if (!selectedLanguage(record, selection)) continue;
    if (chosen && !chosen.has(record.id)) continue;
    yield record;
  }
}

export async function countSelected(
  read: () => AsyncIterable<PipelineRecord>,
  selection: Selection,
): Promise<number> {
  let n = 0;
  for await (const record of read()) if (selectedLanguage(record, selection)) n++;
  return selection.count === undefined ? n : Math.min(n, selection.count);
}

async function sampleIds(
  read: () => AsyncIterable<PipelineRecord>,
  selection: Selection,
): Promise<Set<string>> {
  const keyed: { key: string; id: string }[] = [];
  for await (const record of read()) {
    if (selectedLanguage(record, selection))
      keyed.push({ key: sampleKey(selection.seed, record.id), id: record.id });
  }
  keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.id < b.id ? -1 : 1));
  return new Set(keyed.slice(0, selection.count).map((k) => k.id));
}
