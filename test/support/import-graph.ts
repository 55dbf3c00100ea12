// The import graph of the product code (pipeline/ and stages/) and the checks docs/design.md promises
// of it: every arrow points down through the rooms, and no file, nor folder, reaches itself.
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import ts from "typescript";

const ROOT = path.resolve(import.meta.dirname, "../..");

type Room = "cli" | "runner" | "stages" | "services";

/** Which room a repository path (`pipeline/runner/execute.ts`) is in. */
export function roomOf(file: string): Room {
  if (file.startsWith("stages/")) return "stages";
  if (file === "pipeline/cli.ts" || file === "pipeline/main.ts" || file.startsWith("pipeline/cli/"))
    return "cli";
  if (file === "pipeline/runner.ts" || file.startsWith("pipeline/runner/")) return "runner";
  return "services";
}

// a room may import from the rooms below it (and its own)
const BELOW: Record<Room, readonly Room[]> = {
  cli: ["cli", "runner", "stages", "services"],
  runner: ["runner", "services"],
  stages: ["stages", "services"],
  services: ["services"],
};

export type ImportGraph = ReadonlyMap<string, readonly string[]>;

/** Imports that run up the layers, as `from -> to (room -> room)`. */
export function backArrows(graph: ImportGraph): string[] {
  const found: string[] = [];
  for (const [from, targets] of graph) {
    for (const to of targets) {
      if (!BELOW[roomOf(from)].includes(roomOf(to)))
        found.push(`${from} -> ${to} (${roomOf(from)} -> ${roomOf(to)})`);
    }
  }
  return found;
}

/** Every import cycle, each once, as `a -> b -> a` (depth-first search, by strongly connected parts). */
export function importCycles(graph: ImportGraph): string[] {
  // Tarjan's algorithm: a strongly connected part of more than one file, or a file importing itself
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const cycles: string[] = [];
  let next = 0;
  const visit = (file: string): void => {
    index.set(file, next);
    low.set(file, next);
    next++;
    stack.push(file);
    onStack.add(file);
    for (const to of graph.get(file) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(file, Math.min(low.get(file)!, low.get(to)!));
      } else if (onStack.has(to)) {
        low.set(file, Math.min(low.get(file)!, index.get(to)!));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const part: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      part.push(member);
    } while (member !== file);
    if (part.length > 1 || (graph.get(file) ?? []).includes(file)) cycles.push(cycleThrough(graph, part));
  };
  for (const file of [...graph.keys()].sort()) if (!index.has(file)) visit(file);
  return cycles;
}

/**
 * The folder a file belongs to, as a node of the coarser graph: the second level of its path, where a
 * file and the folder of the same name are one (`pipeline/runner.ts` and `pipeline/runner/`).
 */
export function folderOf(file: string): string {
  const [top, second = ""] = file.split("/");
  return `${top}/${second.replace(/\.ts$/, "")}`;
}

/**
 * Circles between folders: a folder importing one that imports it back, however far round. Each
 * names the imports that close it, so a back arrow is found by its file.
 */
export function folderCycles(graph: ImportGraph): string[] {
  const folders = new Map<string, Set<string>>();
  const via = new Map<string, string>();
  for (const [from, targets] of graph) {
    const a = folderOf(from);
    if (!folders.has(a)) folders.set(a, new Set());
    for (const to of targets) {
      const b = folderOf(to);
      if (a === b) continue;
      folders.get(a)!.add(b);
      if (!via.has(`${a} ${b}`)) via.set(`${a} ${b}`, `${from} -> ${to}`);
    }
  }
  const folderGraph = new Map([...folders].map(([a, bs]) => [a, [...bs]]));
  return importCycles(folderGraph).map((cycle) => {
    const steps = cycle.split(" -> ");
    const imports = steps.slice(1).map((b, i) => via.get(`${steps[i]} ${b}`));
    return `${cycle} (${imports.join("; ")})`;
  });
}

/** One concrete circle inside a strongly connected part, for the message. */
function cycleThrough(graph: ImportGraph, part: readonly string[]): string {
  const members = new Set(part);
  const start = [...part].sort()[0]!;
  const pathTo = new Map<string, string>([[start, start]]);
  const queue = [start];
  while (queue.length > 0) {
    const file = queue.shift()!;
    for (const to of graph.get(file) ?? []) {
      if (to === start) return `${pathTo.get(file)} -> ${start}`;
      if (members.has(to) && !pathTo.has(to)) {
        pathTo.set(to, `${pathTo.get(file)} -> ${to}`);
        queue.push(to);
      }
    }
  }
  return part.join(" -> ");
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(path.join(ROOT, dir))) {
    const rel = `${dir}/${name}`;
    if (statSync(path.join(ROOT, rel)).isDirectory()) out.push(...sourceFiles(rel));
    else if (name.endsWith(".ts") && !name.endsWith(".d.ts")) out.push(rel);
  }
  return out;
}

/** The repository file a relative specifier names (`./x.js` is `./x.ts` in the sources). */
function resolveImport(from: string, specifier: string): string | undefined {
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
  const stem = base.replace(/\.(js|ts)$/, "");
  for (const candidate of [`${stem}.ts`, `${stem}/index.ts`]) {
    try {
      if (statSync(path.join(ROOT, candidate)).isFile()) return candidate;
    } catch {
      // not this one
    }
  }
  return undefined;
}

export function readGraph(): {
  graph: Map<string, string[]>;
  unresolved: string[];
  lines: Map<string, number>;
} {
  const graph = new Map<string, string[]>();
  const unresolved: string[] = [];
  const lines = new Map<string, number>();
  for (const file of [...sourceFiles("pipeline"), ...sourceFiles("stages")]) {
    const text = readFileSync(path.join(ROOT, file), "utf8");
    lines.set(file, text.split("\n").length);
    const targets: string[] = [];
    for (const { fileName } of ts.preProcessFile(text, true, true).importedFiles) {
      if (!fileName.startsWith(".")) continue;
      const to = resolveImport(file, fileName);
      if (to) targets.push(to);
      else unresolved.push(`${file}: ${fileName}`);
    }
    graph.set(file, [...new Set(targets)]);
  }
  return { graph, unresolved, lines };
}
