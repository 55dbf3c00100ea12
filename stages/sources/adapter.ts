// A raw row in, seed pairs out, in CodeFeedback-Filtered-Instruction's terms (`query`, `answer`), as the
// source's `columns` or `chat` mapping says. A row (or a pair of it) that cannot be one is refused with
// a reason; `chat` with `turns: each` makes one pair per user/assistant exchange.
import { type ChatKeys, chatPairs, chatTurns, detectChatKeys, isObject, notAnObject } from "./chat.js";
import type { ChatMapping, ColumnMapping } from "./source.js";

export interface SeedPair {
  query: string;
  answer: string;
  /** the language the row itself declares (OSS-Instruct's `lang`), before canonicalisation */
  declaredLang?: string | undefined;
  /** the row's own id in its dataset, when it has one */
  rowId?: string | undefined;
  /** `turns: each`: the pair's place in the dialogue, from 1 */
  pair?: number | undefined;
}

export interface Refusal {
  reject: string;
  detail: string;
  pair?: number | undefined;
}

export interface Adapted {
  pairs: SeedPair[];
  rejects: Refusal[];
}

/** The value at a dotted PATH (`meta.language`, `pair.0.text`): list items by their number. */
export function valueAt(row: unknown, dotted: string): unknown {
  let value = row;
  for (const key of dotted.split(".")) {
    if (Array.isArray(value) && /^\d+$/.test(key)) value = value[Number(key)];
    else if (isObject(value) && Object.hasOwn(value, key)) value = value[key];
    else return undefined;
  }
  return value;
}

function refused(refusal: Refusal): Adapted {
  return { pairs: [], rejects: [refusal] };
}

function checkNonEmpty(query: string, answer: string, index: number): Refusal | undefined {
  if (query.trim() === "") return { reject: "empty-query", detail: `row ${index} has an empty query` };
  if (answer.trim() === "") return { reject: "empty-answer", detail: `row ${index} has an empty answer` };
  return undefined;
}

/** The language (a string) and the id (a string or number) the row gives under the mapping's PATHs. */
function declared(row: unknown, mapping: { lang?: string | undefined; id?: string | undefined }) {
  const lang = mapping.lang === undefined ? undefined : valueAt(row, mapping.lang);
  const id = mapping.id === undefined ? undefined : valueAt(row, mapping.id);
  return {
    ...(typeof lang === "string" ? { declaredLang: lang } : {}),
    ...(typeof id === "string" || typeof id === "number" ? { rowId: String(id) } : {}),
  };
}

export function adaptColumns(row: unknown, index: number, columns: ColumnMapping): Adapted {
  if (!isObject(row)) return refused(notAnObject(row, index));
  const text: string[] = [];
  for (const dotted of [columns.query, columns.answer]) {
    const value = valueAt(row, dotted);
    if (value === undefined || value === null) {
      return refused({ reject: "missing-field", detail: `row ${index} has no \`${dotted}\`` });
    }
    if (typeof value !== "string") {
      return refused({
        reject: "non-string-field",
        detail: `row ${index}: \`${dotted}\` is ${Array.isArray(value) ? "a list" : typeof value}, expected a string`,
      });
    }
    text.push(value);
  }
  const [query, answer] = text as [string, string];
  const empty = checkNonEmpty(query, answer, index);
  if (empty) return refused(empty);
  return { pairs: [{ query, answer, ...declared(row, columns) }], rejects: [] };
}

const KEY_NAMES = ["field", "role_key", "content_key", "user", "assistant", "system"] as const;

/**
 * `keys`: what the source's first row showed (normalize detects once per source, so one odd row
 * cannot switch the shape); without them the row's own shape is detected.
 */
export function adaptChat(row: unknown, index: number, chat: ChatMapping, keys?: ChatKeys): Adapted {
  if (!isObject(row)) return refused(notAnObject(row, index));
  const given = KEY_NAMES.every((k) => chat[k] !== undefined) ? (chat as ChatKeys) : undefined;
  const use = keys ?? given ?? detectChatKeys(row, chat);
  if (!use) {
    return refused({
      reject: "missing-field",
      detail: `row ${index} has no list of turns (neither \`messages\` nor \`conversations\`; set chat.field)`,
    });
  }
  const read = chatTurns(row, use, index);
  if ("reject" in read) return refused(read);
  const dialogue = chatPairs(read.turns, index);
  if ("reject" in dialogue) return refused(dialogue);
  const facts = declared(row, chat);
  const chosen = chat.turns === "each" ? dialogue.pairs : dialogue.pairs.slice(0, 1);
  const out: Adapted = { pairs: [], rejects: [] };
  for (const { pair, query, answer } of chosen) {
    const number = chat.turns === "each" ? pair + 1 : undefined;
    const empty = checkNonEmpty(query, answer, index);
    if (empty) {
      out.rejects.push({ ...empty, pair: number });
      continue;
    }
    out.pairs.push({ query, answer, ...facts, ...(number !== undefined ? { pair: number } : {}) });
  }
  return out;
}
