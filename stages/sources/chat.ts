// Chat-shaped rows: a list of turns under one field, each turn an object with a role and a content.
// `chat` sources make query/answer pairs of them (normalize); the dialogue audit reads whole dialogues.
// Two shapes are known and detected: `messages` with `role`/`content`, `conversations` with `from`/`value`.

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The reject for a row that is not a JSON object (an array, a string, a number, null). */
export function notAnObject(row: unknown, index: number): ChatReject {
  const kind = row === null ? "null" : Array.isArray(row) ? "an array" : typeof row;
  return { reject: "not-an-object", detail: `row ${index} is ${kind}, expected an object` };
}

/** Where a row keeps its turns and how it names their roles; a chat source's config may set any of them. */
export interface ChatKeys {
  field: string;
  role_key: string;
  content_key: string;
  /** the role values of the user, the assistant and a system turn */
  user: string;
  assistant: string;
  system: string;
}

export type ChatRole = "system" | "user" | "assistant";

export interface ChatTurn {
  role: ChatRole;
  content: string;
}

export interface ChatReject {
  reject: string;
  detail: string;
}

const OPENAI_KEYS: Omit<ChatKeys, "field"> = {
  role_key: "role",
  content_key: "content",
  user: "user",
  assistant: "assistant",
  system: "system",
};
const SHAREGPT_KEYS: Omit<ChatKeys, "field"> = {
  role_key: "from",
  content_key: "value",
  user: "human",
  assistant: "gpt",
  system: "system",
};

/**
 * The keys to read `row` with: those `given`, the rest detected from the row. The field is
 * `messages` or `conversations`, whichever holds a list; the turn keys are `from`/`value` (`human`,
 * `gpt`) when its first turn has `from` or `value`, else `role`/`content`. Undefined when the row is
 * not an object or holds no list of turns where the keys say.
 */
export function detectChatKeys(row: unknown, given: Partial<ChatKeys> = {}): ChatKeys | undefined {
  if (!isObject(row)) return undefined;
  const field = given.field ?? ["messages", "conversations"].find((f) => Array.isArray(row[f]));
  if (field === undefined || !Array.isArray(row[field])) return undefined;
  const first = (row[field] as unknown[]).find(isObject);
  const style = first && ("from" in first || "value" in first) ? SHAREGPT_KEYS : OPENAI_KEYS;
  const defined = Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined));
  return { ...style, field, ...defined };
}

function describe(value: unknown): string {
  return value === null ? "null" : Array.isArray(value) ? "a list" : typeof value;
}

/**
 * The turns of one row, roles mapped to system/user/assistant, or why the row has none that can be
 * read: every turn must be an object with a known role and a string content.
 */
export function chatTurns(row: unknown, keys: ChatKeys, index: number): { turns: ChatTurn[] } | ChatReject {
  if (!isObject(row)) return notAnObject(row, index);
  const list = row[keys.field];
  if (list === undefined || list === null) {
    return { reject: "missing-field", detail: `row ${index} has no \`${keys.field}\`` };
  }
  if (!Array.isArray(list)) {
    return {
      reject: "not-a-list",
      detail: `row ${index}: \`${keys.field}\` is ${describe(list)}, expected a list of turns`,
    };
  }
  const roles = new Map<unknown, ChatRole>([
    [keys.system, "system"],
    [keys.user, "user"],
    [keys.assistant, "assistant"],
  ]);
  const turns: ChatTurn[] = [];
  for (const [t, turn] of list.entries()) {
    const at = `row ${index}, turn ${t}`;
    if (!isObject(turn)) {
      return { reject: "turn-not-an-object", detail: `${at} is ${describe(turn)}, expected an object` };
    }
    const role = turn[keys.role_key];
    if (role === undefined || role === null) {
      return { reject: "turn-without-role", detail: `${at} has no \`${keys.role_key}\`` };
    }
    const content = turn[keys.content_key];
    if (content === undefined || content === null) {
      return { reject: "turn-without-content", detail: `${at} has no \`${keys.content_key}\`` };
    }
    if (typeof content !== "string") {
      return {
        reject: "non-string-content",
        detail: `${at}: \`${keys.content_key}\` is ${describe(content)}, expected a string`,
      };
    }
    const mapped = roles.get(role);
    if (mapped === undefined) {
      return {
        reject: "unknown-role",
        detail: `${at}: role ${JSON.stringify(role)?.slice(0, 40)} is none of ${keys.user}, ${keys.assistant}, ${keys.system}`,
      };
    }
    turns.push({ role: mapped, content });
  }
  return { turns };
}

/** One user turn and the assistant turn that answers it; `pair` counts from 0 in the dialogue. */
export interface ChatPair {
  pair: number;
  query: string;
  answer: string;
}

/**
 * The user/assistant pairs of a dialogue, system turns left out. The rest must alternate from a user
 * turn (a last user turn left unanswered is allowed); a dialogue that does not is refused.
 */
export function chatPairs(turns: readonly ChatTurn[], index: number): { pairs: ChatPair[] } | ChatReject {
  const spoken = turns.map((turn, at) => ({ ...turn, at })).filter((turn) => turn.role !== "system");
  const pairs: ChatPair[] = [];
  for (let i = 0; i < spoken.length; i += 2) {
    const user = spoken[i]!;
    const assistant = spoken[i + 1];
    if (user.role !== "user" || (assistant !== undefined && assistant.role !== "assistant")) {
      const wrong = user.role !== "user" ? user : assistant!;
      return {
        reject: "not-alternating",
        detail: `row ${index}, turn ${wrong.at}: ${wrong.role === "assistant" ? "an" : "a"} ${wrong.role} turn where ${wrong === user ? "a user" : "an assistant"} turn was due (user and assistant turns must alternate, from a user turn)`,
      };
    }
    if (assistant) pairs.push({ pair: pairs.length, query: user.content, answer: assistant.content });
  }
  if (pairs.length === 0) {
    return {
      reject: "no-user-assistant-pair",
      detail: `row ${index} has no user turn answered by an assistant turn`,
    };
  }
  return { pairs };
}
