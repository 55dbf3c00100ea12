// What a stage's kept sandbox results hold (pipeline/execution/kept.ts): the whole lines of every
// segment of a dir, so a test can see that a resumed run kept no result twice.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** Entries kept in `dir` (a line torn by a kill is not one); 0 when there is no dir. */
export function keptEntries(dir: string): number {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  let entries = 0;
  for (const name of names.filter((n) => n.endsWith(".jsonl"))) {
    for (const line of readFileSync(join(dir, name), "utf8").split("\n")) {
      try {
        JSON.parse(line.slice(line.indexOf("\t") + 1));
        if (line.includes("\t")) entries++;
      } catch {
        // torn by a kill
      }
    }
  }
  return entries;
}
