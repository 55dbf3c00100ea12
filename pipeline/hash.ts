// Stable hashing: the same value always gives the same hash, whatever the key order of its objects;
// a stage's config is hashed without the settings marked operational, which move no record.
import { createHash } from "node:crypto";
import type { z } from "zod";

export function stableStringify(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableStringify(v)}`).join(",")}}`;
}

export function hashOf(value: unknown): string {
  return createHash("sha256").update(stableStringify(value)).digest("hex").slice(0, 16);
}

/** Settings past this many are not kept one by one: a change among them is only "changed". */
const MAX_SETTINGS = 300;
/** a setting named like a credential (`api_key`, `token`), by its last path segment */
const SECRET = /(^|[._])(key|token|secret|password)$/i;

/**
 * `value`'s leaves by dotted path, each as its JSON text, or a hash of it when long (a prompt):
 * small enough to keep in a manifest, and enough to name the settings that differ later.
 */
export function settingsOf(value: unknown): Record<string, string> | undefined {
  const settings: Record<string, string> = {};
  let count = 0;
  const walk = (v: unknown, path: string): boolean => {
    if (v === undefined) return true;
    if (v !== null && typeof v === "object") {
      const entries = Array.isArray(v) ? v.map((x, i) => [String(i), x] as const) : Object.entries(v);
      return entries.every(([key, x]) => walk(x, path ? `${path}.${key}` : key));
    }
    if (++count > MAX_SETTINGS) return false;
    // nothing that could be a credential is kept, not even its hash
    if (SECRET.test(path)) return true;
    const json = JSON.stringify(v);
    settings[path] = json.length <= 120 ? json : `#${hashOf(v)}`;
    return true;
  };
  return walk(value, "") ? settings : undefined;
}

/**
 * The settings that differ between two `settingsOf`, named as a user writes them (`stages.<stage>.`
 * for the stage's own section), the first few with their values: `model "a" -> "b"`.
 */
export function settingChanges(
  stage: string,
  before: Record<string, string>,
  after: Record<string, string>,
): string {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter(
    (key) => before[key] !== after[key],
  );
  const name = (key: string) =>
    key.startsWith("config.") ? `stages.${stage}.${key.slice(7)}` : key.replace(/^extra\./, "");
  // a long value is kept as a hash, and a digest (a file's, the reviewers' verdicts) says nothing either
  const value = (v: string | undefined) =>
    v === undefined ? "unset" : v.startsWith("#") || /^"[0-9a-f]{16,}"$/.test(v) ? "" : v;
  const shown = keys.slice(0, 3).map((key) => {
    const [was, now] = [value(before[key]), value(after[key])];
    return was === "" || now === "" ? `${name(key)} edited` : `${name(key)} ${was} -> ${now}`;
  });
  return keys.length > 3 ? `${shown.join(", ")} and ${keys.length - 3} more` : shown.join(", ");
}

const operationalSettings = new WeakSet<object>();

/**
 * Marks a setting that cannot change a record (how much runs at once, how long to wait, how often to
 * retry, what a dry run assumes): a stage's config hash leaves it out, so changing it never makes a
 * finished stage stale.
 */
export function operational<T extends z.ZodType>(schema: T): T {
  operationalSettings.add(schema);
  return schema;
}

interface SchemaDef {
  innerType?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  options?: z.ZodType[];
}
const defOf = (schema: z.ZodType) => (schema as unknown as { _zod: { def: SchemaDef } })._zod.def;

/** "operational" when `schema`, or what it wraps (a default, optional), is marked; else what it wraps. */
export function settingOf(schema: z.ZodType): "operational" | SchemaDef {
  for (let s = schema; ; s = defOf(s).innerType!) {
    if (operationalSettings.has(s)) return "operational";
    if (!defOf(s).innerType) return defOf(s);
  }
}

/** A config value as `schema` parsed it, without the settings marked operational (at any depth). */
export function withoutOperational(schema: z.ZodType, value: unknown): unknown {
  const setting = settingOf(schema);
  if (setting === "operational") return undefined;
  if (value === null || typeof value !== "object" || Array.isArray(value)) return value;
  const { shape, options } = setting;
  const option = options?.find((o) => o.safeParse(value).success);
  if (option) return withoutOperational(option, value);
  if (!shape) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, v]) => [key, shape[key] ? withoutOperational(shape[key], v) : v]),
  );
}
