// Loads a YAML config, applies `--set key=value` overrides, and validates it. Every error names the
// file, the key path and, where the key is in the file, its line, so a user can go straight to it.
import { readFileSync } from "node:fs";
import { isMap, parseDocument } from "yaml";
import type { z } from "zod";
import { ConfigError } from "../errors.js";
import { type RootConfig, rootConfigSchema } from "./schema.js";

export interface LoadedConfig {
  config: RootConfig;
  /** the file it came from, or "(built-in defaults)" */
  source: string;
  /** line numbers of keys in the file, by dotted path, for error messages */
  lines: Map<string, number>;
  /** the `--set` overrides applied, as given: a shard's rerun command repeats them */
  sets?: readonly string[];
}

export interface LoadOptions {
  file?: string;
  /** `key.path=value` overrides; values are parsed as YAML scalars/flow collections */
  sets?: string[];
  /** overrides `data_dir` */
  dataDir?: string;
}

/**
 * A `--set` of a key (`llm.<role>.api_key=...`): kept out of every file and printed command (a shard's
 * manifest, its rerun command, a job script); the key comes from the environment there instead.
 */
export function isSecretSet(assignment: string): boolean {
  return /^(?:[^=]*\.)?api_key=/.test(assignment);
}

/** What validating a stage's section needs of the stage: pipeline/stage.ts's Stage fits. */
export interface StageSchema {
  name: string;
  configSchema: z.ZodType<unknown>;
  switchable?: boolean | undefined;
}

/**
 * Loads and validates the config; with `stages`, their sections too, so that one error lists every
 * mistake of the file, not only the first block's.
 */
export function loadConfig(options: LoadOptions = {}, stages: readonly StageSchema[] = []): LoadedConfig {
  const source = options.file ?? "(built-in defaults)";
  const lines = new Map<string, number>();
  const raw = rawConfig(options, lines);
  const root = check(rootConfigSchema, raw, [], lines);
  const sections = isRecord(raw.stages) ? raw.stages : {};
  const problems = [...(root.ok ? [] : root.problems), ...checkStages(stages, sections, lines).problems];
  if (!root.ok || problems.length > 0) throw invalidConfig(source, problems);
  return { config: root.data, source, lines, sets: options.sets ?? [] };
}

/**
 * Each stage's `stages.<name>` validated by its schema (a switchable stage's `enabled` taken out
 * first), and every problem of them, including a section of a stage that does not exist.
 */
export function checkStages(
  stages: readonly StageSchema[],
  sections: Record<string, unknown>,
  lines: Map<string, number>,
): { configs: Map<string, unknown>; switchedOff: Set<string>; problems: Problem[] } {
  const configs = new Map<string, unknown>();
  const switchedOff = new Set<string>();
  const problems: Problem[] = [];
  if (stages.length > 0) {
    const known = `Stages are: ${stages.map((s) => s.name).join(", ")}`;
    for (const name of Object.keys(sections)) {
      if (!stages.some((s) => s.name === name)) {
        problems.push(problemAt(["stages", name], lines, `unknown stage. ${known}`));
      }
    }
  }
  for (const stage of stages) {
    let section = sections[stage.name];
    if (stage.switchable && isRecord(section) && "enabled" in section) {
      const { enabled, ...rest } = section;
      if (typeof enabled !== "boolean") {
        problems.push(
          problemAt(
            ["stages", stage.name, "enabled"],
            lines,
            `must be true or false (false: do not run ${stage.name}; the stages after it go on without it)`,
          ),
        );
      } else if (!enabled) switchedOff.add(stage.name);
      section = rest;
    }
    const result = check(stage.configSchema, section, ["stages", stage.name], lines);
    if (result.ok) configs.set(stage.name, result.data);
    else problems.push(...result.problems);
  }
  return { configs, switchedOff, problems };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The config as written: the file's keys with the `--set`s and data dir applied, not yet validated. */
export function rawConfig(options: LoadOptions, lines = new Map<string, number>()): Record<string, unknown> {
  let raw: Record<string, unknown> = {};
  if (options.file) {
    let text: string;
    try {
      text = readFileSync(options.file, "utf8");
    } catch (error) {
      throw new ConfigError(
        `cannot read config file ${options.file}: ${(error as Error).message}. Pass an existing file with --config (see configs/).`,
      );
    }
    const doc = parseDocument(text, { prettyErrors: true });
    if (doc.errors.length > 0) {
      throw new ConfigError(`${options.file}: invalid YAML: ${doc.errors[0]!.message}`);
    }
    const value = doc.toJS() ?? {};
    if (typeof value !== "object" || Array.isArray(value)) {
      throw new ConfigError(
        `${options.file}: the top level must be a mapping of keys (data_dir, llm, stages, ...)`,
      );
    }
    raw = value as Record<string, unknown>;
    collectLines(doc.contents, [], text, lines);
  }
  // a block's `kind` first: switching it replaces the block, and the other --set keys go into the new one
  const sets = options.sets ?? [];
  const switchesKind = (a: string) => /(^|\.)kind=/.test(a);
  for (const assignment of [...sets.filter(switchesKind), ...sets.filter((a) => !switchesKind(a))]) {
    const path = applySet(raw, assignment, lines);
    lines.set(path, FROM_SET);
  }
  if (options.dataDir) raw.data_dir = options.dataDir;
  return raw;
}

/** Validates a value found at `path` of the config against `schema`, with errors that name file, key and line. */
export function validate<T>(
  schema: z.ZodType<T>,
  value: unknown,
  path: (string | number)[],
  source: string,
  lines: Map<string, number>,
): T {
  const result = check(schema, value, path, lines);
  if (!result.ok) throw invalidConfig(source, result.problems);
  return result.data;
}

/** One mistake of a config: its line in the file (0: from --set) orders it. */
export interface Problem {
  line: number | undefined;
  text: string;
}

/** The one error for every problem found in a config, in file order, each with its key and line. */
export function invalidConfig(source: string, problems: readonly Problem[]): ConfigError {
  const inFile = (p: Problem) => (p.line ? p.line : Number.POSITIVE_INFINITY);
  const sorted = [...problems].sort((a, b) => inFile(a) - inFile(b));
  return new ConfigError(
    `invalid configuration in ${source}:\n${sorted.map((p) => p.text).join("\n")}\nFix the key(s) above; configs/default.yaml documents every key.`,
  );
}

function check<T>(
  schema: z.ZodType<T>,
  value: unknown,
  path: (string | number)[],
  lines: Map<string, number>,
): { ok: true; data: T } | { ok: false; problems: Problem[] } {
  const result = schema.safeParse(value ?? {});
  if (result.success) return { ok: true, data: result.data };
  const problems = result.error.issues.flatMap((issue) => {
    const at = [...path, ...issue.path.map((k) => (typeof k === "number" ? k : String(k)))];
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((k) => problemAt([...at, k], lines, "unknown key"));
    }
    return [problemAt(at, lines, issue.message)];
  });
  return { ok: false, problems };
}

function problemAt(full: (string | number)[], lines: Map<string, number>, what: string): Problem {
  const line = nearestLine(lines, full);
  const where = line === FROM_SET ? " (from --set)" : line ? ` (line ${line})` : "";
  return { line, text: `  ${full.join(".") || "(top level)"}${where}: ${what}` };
}

function nearestLine(lines: Map<string, number>, path: (string | number)[]): number | undefined {
  for (let n = path.length; n > 0; n--) {
    const line = lines.get(path.slice(0, n).join("."));
    if (line !== undefined) return line;
  }
  return undefined;
}

function collectLines(node: unknown, path: string[], text: string, lines: Map<string, number>): void {
  if (!isMap(node)) return;
  for (const pair of node.items) {
    const key = pair.key as { value?: unknown; range?: [number, number, number] } | null;
    if (!key || key.value === undefined) continue;
    const full = [...path, String(key.value)];
    if (key.range) lines.set(full.join("."), lineOf(text, key.range[0]));
    collectLines(pair.value, full, text, lines);
  }
}

function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/** Marks, in the line map, a key whose value came from `--set` rather than from the file. */
const FROM_SET = 0;

/**
 * Applies one `--set` and returns the dotted path it set. A `kind` that changes (a tagged block such
 * as `stages.pack.embedder`, whose other keys belong to the kind) replaces the whole block: the file's
 * keys for the old kind would be unknown keys of the new one.
 */
function applySet(raw: Record<string, unknown>, assignment: string, lines: Map<string, number>): string {
  const eq = assignment.indexOf("=");
  if (eq <= 0) {
    throw new ConfigError(
      // the text may be a secret typed without its key (`--set sk-...`): never echo it
      "--set: expected key.path=value, e.g. --set stages.filter.threshold=4",
    );
  }
  const keys = assignment.slice(0, eq).split(".");
  const text = assignment.slice(eq + 1);
  let value: unknown;
  try {
    value = parseDocument(text).toJS();
  } catch {
    value = text;
  }
  let target: Record<string, unknown> = raw;
  for (const key of keys.slice(0, -1)) {
    const next = target[key];
    if (next === undefined || next === null) target[key] = {};
    else if (typeof next !== "object" || Array.isArray(next)) {
      throw new ConfigError(
        `--set ${keys.join(".")}=...: ${key} is not a mapping, so it has no key ${keys.at(-1)}`,
      );
    }
    target = target[key] as Record<string, unknown>;
  }
  const last = keys.at(-1)!;
  if (last === "kind" && target.kind !== undefined && target.kind !== value) {
    for (const key of Object.keys(target)) delete target[key];
    const block = keys.slice(0, -1).join(".");
    for (const path of [...lines.keys()]) if (path.startsWith(`${block}.`)) lines.delete(path);
  }
  target[last] = value ?? null;
  return keys.join(".");
}
