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
