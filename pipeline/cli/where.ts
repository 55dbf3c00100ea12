// Which config and data dir a command reads, said before its answer: a `status` with no --config
// after the README's sample command reads the default config's data dir, not the sample's.
import { existsSync, readdirSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import type { LoadedConfig } from "../config/load.js";
import { loadConfig } from "../config/load.js";
import { AUDIT_CONFIG } from "./audit.js";

/** Stages of `names` that have a manifest under `dataDir` (started, whatever their state). */
export function stagesWithRuns(dataDir: string, names: readonly string[]): string[] {
  return names.filter((name) => existsSync(join(dataDir, name, "manifest.json")));
}

function shown(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith("..") ? rel : path;
}

/**
 * The lines to print: the config file and data dir read, and, when nothing has run there, every
 * other config beside it whose data dir holds runs, with the option that reads it.
 */
export function whereLines(loaded: LoadedConfig, names: readonly string[]): string[] {
  const dataDir = resolve(loaded.config.data_dir);
  const lines = [`config ${loaded.source}, data dir ${shown(dataDir)}`];
  // an audit's data dir judged by another config reads as stale throughout
  const audit = join(dataDir, AUDIT_CONFIG);
  if (existsSync(audit) && resolve(loaded.source) !== audit)
    lines.push(`this data dir holds an audit: add --config ${shown(audit)} to read it as it ran`);
  if (stagesWithRuns(dataDir, names).length > 0 || !existsSync(loaded.source)) return lines;
  const folder = dirname(loaded.source);
  let siblings: string[];
  try {
    siblings = readdirSync(folder).filter((f) => /\.ya?ml$/.test(f));
  } catch {
    return lines;
  }
  for (const file of siblings.sort()) {
    const path = join(folder, file);
    if (resolve(path) === resolve(loaded.source)) continue;
    let other: string;
    try {
      other = resolve(loadConfig({ file: path }).config.data_dir);
    } catch {
      continue; // a config that does not load says nothing about where runs are
    }
    if (other === dataDir) continue;
    const ran = stagesWithRuns(other, names);
    if (ran.length === 0) continue;
    lines.push(
      `nothing has run in ${shown(dataDir)}; ${shown(other)} (${path}) has ${ran.length} stage(s) run: ` +
        `add --config ${path} to see them`,
    );
  }
  return lines;
}
