// The paper's prompts live in prompts/*.md as plain text with `{name}` placeholders, nothing else:
// the file is exactly what the model reads (its final newline aside). A name like `complexity-1`
// means prompts/complexity-1.md; anything with a slash or ending in .md is a path (a user's own
// prompt), relative to the current directory.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ConfigError } from "../errors.js";

export const PROMPTS_DIR = fileURLToPath(new URL("../../prompts/", import.meta.url));

export interface PromptTemplate {
  name: string;
  path: string;
  text: string;
  /** placeholder names in order of first appearance */
  placeholders: string[];
  /** one pass: a value that itself contains `{query}` is not expanded again */
  render(values: Record<string, string>): string;
}

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
/** by the name a stage asked for: stages call `loadPrompt` per record */
const loaded = new Map<string, PromptTemplate>();

export function promptPath(nameOrPath: string): string {
  const isPath = nameOrPath.includes("/") || nameOrPath.endsWith(".md");
  return isPath ? resolve(nameOrPath) : resolve(PROMPTS_DIR, `${nameOrPath}.md`);
}

export function loadPrompt(nameOrPath: string): PromptTemplate {
  const known = loaded.get(nameOrPath);
  if (known) return known;
  const path = promptPath(nameOrPath);
  let raw: string;
  try {
    raw = readFileSync(path, "utf8");
  } catch (error) {
    throw new ConfigError(
      `prompt '${nameOrPath}' not found at ${path}: name one of the files in ${PROMPTS_DIR} ` +
        "(without .md) or give the path of your own Markdown prompt.",
      { cause: error },
    );
  }
  const template = parsePrompt(nameOrPath, path, raw);
  loaded.set(nameOrPath, template);
  return template;
}

export function parsePrompt(name: string, path: string, raw: string): PromptTemplate {
  const text = raw.replace(/\r?\n$/, "");
  // Split once into literal text and placeholder names, so rendering is a concatenation.
  const pieces: { literal: string; key?: string }[] = [];
  let last = 0;
  for (const m of text.matchAll(PLACEHOLDER)) {
    pieces.push({ literal: text.slice(last, m.index), key: m[1]! });
    last = m.index + m[0].length;
  }
  pieces.push({ literal: text.slice(last) });
  const placeholders = [...new Set(pieces.flatMap((p) => (p.key === undefined ? [] : [p.key])))];
  return {
    name,
    path,
    text,
    placeholders,
    render(values) {
      let out = "";
      for (const piece of pieces) {
        out += piece.literal;
        if (piece.key !== undefined)
          out += Object.hasOwn(values, piece.key) ? values[piece.key] : `{${piece.key}}`;
      }
      return out;
    },
  };
}
