// The single-turn records packing starts from: filter's survivors, checked. A record without a
// usable query or answer is a reject with its reason (the run goes on); a record of a language the
// config does not pack is counted and left out.

import type { PipelineRecord } from "../../pipeline/record.js";
import type { Emitter } from "../../pipeline/stage.js";
import type { PackConfig } from "./config.js";
import type { PackStats } from "./summary.js";

export interface Single {
  id: string;
  query: string;
  answer: string;
  lang: string;
}

function problemOf(
  record: PipelineRecord,
  config: PackConfig,
): { reason: string; detail: string } | undefined {
  const { query, answer } = record;
  if (typeof query !== "string") {
    return {
      reason: "query-not-text",
      detail: `the query is ${query === undefined ? "missing" : `a ${typeof query}`}, not text`,
    };
  }
  if (query.trim() === "") return { reason: "empty-query", detail: "the query is empty" };
  if (query.length > config.max_query_chars) {
    return {
      reason: "query-too-long",
      detail: `the query has ${query.length} characters, over stages.pack.max_query_chars (${config.max_query_chars})`,
    };
  }
  if (typeof answer !== "string" || answer.trim() === "") {
    return { reason: "empty-answer", detail: "the record has no answer text to pack after its query" };
  }
  return undefined;
}

export async function validateSingles(
  records: AsyncIterable<PipelineRecord>,
  config: PackConfig,
  emit: Emitter,
  stats: PackStats,
): Promise<Single[]> {
  const wanted = config.languages === "all" ? undefined : new Set(config.languages);
  const singles: Single[] = [];
  for await (const record of records) {
    stats.input++;
    const lang = typeof record.lang === "string" && record.lang !== "" ? record.lang : "unknown";
    if (wanted && !wanted.has(lang)) {
      stats.other_languages[lang] = (stats.other_languages[lang] ?? 0) + 1;
      continue;
    }
    const problem = problemOf(record, config);
    if (problem) {
      await emit.reject({ id: record.id, ...problem, record });
      continue;
    }
    singles.push({ id: record.id, query: record.query as string, answer: record.answer as string, lang });
  }
  // Upstream order is completion order (record-wise stages run records concurrently); sorting by id
  // makes the packing a function of the set of records and the seed alone.
  singles.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  stats.selected = singles.length;
  return singles;
}
