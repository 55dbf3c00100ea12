// A stage's batches, one JSON file each under `<stage dir>/batch/`, next to their input (and, for
// `files`, output) files. An entry is written, durably, before anything depends on it: before its
// file is uploaded, and again with each id the provider gives back, so a run killed at any instant
// finds what it had sent (by these ids, or by the entry's id in the batch's metadata) and never
// sends it again.
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writeDurably } from "../../store/manifest.js";

export type EntryState =
  /** written, not yet (known to be) uploaded or created */
  | "prepared"
  /** `files`: waiting for its output file */
  | "waiting"
  /** the provider's own states while it works */
  | "validating"
  | "in_progress"
  | "finalizing"
  | "cancelling"
  /** its results are in the response cache */
  | "collected";

export interface BatchEntry {
  /** deterministic: the stage's sequence number, the role, the model and the requests' keys */
  id: string;
  role: string;
  model: string;
  provider: "openai" | "files";
  /** the stage's round it was sent in (1 = the first batch of the stage's first run) */
  round: number;
  /** file names in the batch dir */
  input: string;
  output: string;
  /** requests in it */
  total: number;
  createdAt: string;
  state: EntryState;
  fileId?: string;
  batchId?: string;
  /** once collected: the requests answered, and those that failed with the provider's reason */
  done?: number;
  failed?: Record<string, string>;
  /** the provider's end state (completed, failed, expired, cancelled) */
  ended?: string;
}

export class BatchLedger {
  readonly dir: string;
  constructor(stageDir: string) {
    this.dir = join(stageDir, "batch");
  }

  entries(): BatchEntry[] {
    if (!existsSync(this.dir)) return [];
    return readdirSync(this.dir)
      .filter((name) => name.endsWith(".batch.json"))
      .map((name) => JSON.parse(readFileSync(join(this.dir, name), "utf8")) as BatchEntry)
      .sort((a, b) => a.round - b.round || a.createdAt.localeCompare(b.createdAt));
  }

  save(entry: BatchEntry): void {
    mkdirSync(this.dir, { recursive: true });
    writeDurably(join(this.dir, `${entry.id}.batch.json`), `${JSON.stringify(entry, null, 2)}\n`);
  }

  writeInput(entry: BatchEntry, text: string): void {
    mkdirSync(this.dir, { recursive: true });
    writeDurably(join(this.dir, entry.input), text);
  }

  path(name: string): string {
    return join(this.dir, name);
  }
}
