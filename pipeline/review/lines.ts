// What the review index reads of a stage's parts: their complete lines, each with its byte offset (a
// line being written is left for the next look), and of each record the fields people filter on.

import { closeSync, openSync, readSync } from "node:fs";

/** Bytes read at a time; a longer line is carried over into the next read. */
const CHUNK = 1 << 20;

/**
 * Calls `onLine` with each complete line of `path` from byte `from` to `to`, and its offset; returns
 * the offset after the last complete line.
 */
export function scanLines(
  path: string,
  from: number,
  to: number,
  onLine: (line: Buffer, offset: number) => void,
): number {
  const fd = openSync(path, "r");
  try {
    const buffer = Buffer.allocUnsafe(CHUNK);
    let carry: Buffer[] = [];
    let at = from;
    let lineStart = from;
    for (;;) {
      const read = readSync(fd, buffer, 0, Math.min(CHUNK, to - at), at);
      if (read === 0) break;
      at += read;
      const chunk = buffer.subarray(0, read);
      let start = 0;
      for (let nl = chunk.indexOf(10); nl >= 0; start = nl + 1, nl = chunk.indexOf(10, start)) {
        const piece = chunk.subarray(start, nl);
        const line = carry.length ? Buffer.concat([...carry, piece]) : piece;
        carry = [];
        if (line.length > 0) onLine(line, lineStart);
        lineStart += line.length + 1;
      }
      if (start < read) carry.push(Buffer.from(chunk.subarray(start)));
    }
    return lineStart;
  } finally {
    closeSync(fd);
  }
}

/**
 * The lines of `path` (up to byte `to`) with an output (`o`) or reject (`r`) that holds `text`, any
 * case: each line's offset, with the places of those items in it.
 */
export function linesHolding(path: string, to: number, kind: "o" | "r", text: string): Map<number, number[]> {
  // as it appears inside a JSON string: quotes, backslashes and newlines escaped
  const needle = JSON.stringify(text.toLowerCase()).slice(1, -1);
  const found = new Map<number, number[]>();
  scanLines(path, 0, to, (line, offset) => {
    const json = line.toString("utf8");
    if (!json.toLowerCase().includes(needle)) return;
    const entry = JSON.parse(json) as { o?: unknown[]; r?: unknown[] };
    const items = entry[kind] ?? [];
    const which = [...items.keys()].filter((i) => JSON.stringify(items[i]).toLowerCase().includes(needle));
    if (which.length) found.set(offset, which);
  });
  return found;
}

const str = (v: unknown) => (typeof v === "string" && v !== "" ? v : null);

/** A record's filterable fields; `gates` and `sources` (names) are lists, `origins` the ids it was made from. */
export interface Fields {
  method: string | null;
  lang: string | null;
  verdict: string | null;
  reason: string | null;
  gates: string[];
  sources: string[];
  origins: string[];
}

/** The fields people filter on, from a record (or a reject's copy of one) as any stage writes it. */
export function fieldsOf(
  record: Record<string, unknown> | undefined,
  id: string,
  reason: string | null,
): Fields {
  const r = record ?? {};
  const validation = (
    r.meta as { validation?: { outcome?: unknown; gates?: { rule?: unknown }[] } } | undefined
  )?.validation;
  const origins = Array.isArray(r.sources) ? r.sources.filter((s): s is string => typeof s === "string") : [];
  const nameOf = (x: string) => x.slice(0, Math.max(0, x.indexOf(":"))) || null;
  const names = [
    str(r.resource) ?? str(r.source),
    ...origins.map(nameOf),
    origins.length ? null : nameOf(id),
  ];
  return {
    method: str(r.method),
    lang: str(r.lang),
    verdict: str(validation?.outcome),
    reason,
    gates: [...new Set((validation?.gates ?? []).map((g) => String(g.rule)))],
    sources: [...new Set(names.filter((x): x is string => x !== null))],
    origins: [...new Set(origins)],
  };
}
