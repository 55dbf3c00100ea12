// Reading a JSON object out of a model's answer as models actually write it: bare, in a ```json fence,
// with prose before and after, with trailing commas, with the typographic quotes the paper's own prompt
// uses around keys, or as a Python dict (single quotes, True/False/None). Returns the first object that
// parses, or why none did.

export type JsonAnswer = { ok: true; value: Record<string, unknown> } | { ok: false; error: string };

export function parseJsonAnswer(answer: string): JsonAnswer {
  const candidates: string[] = [];
  for (const m of answer.matchAll(/```[ \t]*(?:json5?|JSON)?[ \t]*\n([\s\S]*?)```/g)) candidates.push(m[1]!);
  candidates.push(...balancedObjects(answer));
  let firstError: string | undefined;
  for (const text of candidates) {
    for (const variant of [text, relaxed(text), relaxed(singleQuoted(text))]) {
      try {
        const value: unknown = JSON.parse(variant);
        if (value && typeof value === "object" && !Array.isArray(value)) {
          return { ok: true, value: value as Record<string, unknown> };
        }
        firstError ??= "the JSON value is not an object";
      } catch (error) {
        firstError ??= (error as Error).message;
      }
    }
  }
  return { ok: false, error: firstError ?? "no JSON object in the answer" };
}

/** Every top-level `{...}` span (strings and escapes respected), in order of appearance. */
function balancedObjects(text: string): string[] {
  const found: string[] = [];
  let depth = 0;
  let start = -1;
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === "\\") i++;
      else if (c === quote) quote = undefined;
      continue;
    }
    if (c === '"' && depth > 0) quote = c;
    else if (c === "{") {
      if (depth === 0) start = i;
      depth++;
    } else if (c === "}" && depth > 0) {
      depth--;
      if (depth === 0) found.push(text.slice(start, i + 1));
    }
  }
  return found;
}

/** The usual near-JSON: trailing commas, curly quotes around keys and strings, comments on own lines. */
function relaxed(text: string): string {
  return text
    .replace(/^\s*\/\/.*$/gm, "")
    .replace(/[“”]/g, '"')
    .replace(/(^|[{,\s])[‘’']([A-Za-z_][\w ]*)[‘’'](\s*:)/g, '$1"$2"$3')
    .replace(/,(\s*[}\]])/g, "$1");
}

/**
 * A Python dict literal as JSON: single-quoted strings become double-quoted ones (an apostrophe in a
 * double-quoted string stays as it is), and True, False and None outside strings become JSON's words.
 */
function singleQuoted(text: string): string {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"' || c === "'") {
      // the content as a JSON string's: its escapes (\n, \u00e9) kept, \' unescaped, a bare " escaped
      let value = "";
      let j = i + 1;
      for (; j < text.length && text[j] !== c; j++) {
        if (text[j] === "\\" && j + 1 < text.length) {
          j++;
          value += text[j] === "'" ? "'" : `\\${text[j]}`;
        } else value += text[j] === '"' ? '\\"' : text[j];
      }
      out += `"${value}"`;
      i = j;
    } else {
      const word = /^(?:True|False|None)\b/.exec(text.slice(i, i + 5));
      if (word && !/\w/.test(text[i - 1] ?? "")) {
        out += word[0] === "True" ? "true" : word[0] === "False" ? "false" : "null";
        i += word[0].length - 1;
      } else out += c;
    }
  }
  return out;
}

/** A field as text: a string as is, a list of strings joined, anything else absent. */
export function textField(value: Record<string, unknown>, key: string): string | undefined {
  const v = value[key];
  if (typeof v === "string") return v.trim();
  if (Array.isArray(v) && v.every((x) => typeof x === "string")) return v.map((x) => x.trim()).join("; ");
  return undefined;
}
