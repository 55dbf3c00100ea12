// DIR/results.jsonl as the evaluation's checkpoint: every finished task's rounds are appended in a
// single write, so a kill -9 can only tear the last line; the next run cuts a torn tail (and any
// task whose last round did not make it), keeps every finished task and evaluates only the rest.
// DIR/run.json says what was evaluated; a rerun with other settings into the same DIR is refused
// (its figures would mix two evaluations) unless --force starts over.
import { existsSync, readFileSync } from "node:fs";
import { appendFile, mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { UserError } from "../../errors.js";
import { writeDurably } from "../../store/manifest.js";
import type { RoundRecord } from "./session.js";

/** A benchmark row that is not a usable task: recorded once, never scored. */
export interface InvalidTaskRecord {
  task_id: string;
  round: 0;
  last: true;
  outcome: "invalid-task";
  reason: string;
}

export type ResultLine = RoundRecord | InvalidTaskRecord;

/** What makes two runs the same evaluation. */
export interface RunIdentity {
  benchmark: string;
  repo: string;
  commit: string;
  model: string;
  feedback: string;
  rounds: number;
  feedback_model: string | null;
  prompts_sha256: string;
  fence: string;
}

export class ResultsFile {
  readonly path: string;
  /** finished tasks' lines, by task id, in the order they were written */
  readonly done = new Map<string, ResultLine[]>();
  private writing: Promise<void> = Promise.resolve();

  private constructor(readonly dir: string) {
    this.path = path.join(dir, "results.jsonl");
  }

  /** Opens DIR for `identity`: resumes a matching run, refuses another unless `force`. */
  static async open(dir: string, identity: RunIdentity, force: boolean): Promise<ResultsFile> {
    await mkdir(dir, { recursive: true });
    const runPath = path.join(dir, "run.json");
    const file = new ResultsFile(dir);
    if (force) await rm(file.path, { force: true });
    else if (existsSync(runPath)) {
      const earlier = JSON.parse(readFileSync(runPath, "utf8")) as Partial<RunIdentity>;
      const differs = (Object.keys(identity) as (keyof RunIdentity)[]).filter(
        (key) => JSON.stringify(earlier[key] ?? null) !== JSON.stringify(identity[key]),
      );
      if (differs.length > 0) {
        const what = differs.map(
          (k) => `${k} ${JSON.stringify(earlier[k])} -> ${JSON.stringify(identity[k])}`,
        );
        throw new UserError(
          `${dir} holds another evaluation (${what.join("; ")}): give a new --out directory, or --force to start this one over there`,
        );
      }
    }
    await writeFile(runPath, `${JSON.stringify(identity, null, 2)}\n`);
    file.load();
    return file;
  }

  private load(): void {
    if (!existsSync(this.path)) return;
    const text = readFileSync(this.path, "utf8");
    const lines: ResultLine[] = [];
    let clean = true;
    for (const raw of text.split("\n")) {
      if (raw === "") continue;
      try {
        lines.push(JSON.parse(raw) as ResultLine);
      } catch {
        clean = false; // a torn last line: that task is evaluated again
        break;
      }
    }
    if (!text.endsWith("\n") && text !== "") clean = false;
    const open = new Map<string, ResultLine[]>();
    for (const line of lines) {
      const rounds = open.get(line.task_id) ?? [];
      rounds.push(line);
      open.set(line.task_id, rounds);
      if (line.last) {
        this.done.set(line.task_id, rounds);
        open.delete(line.task_id);
      }
    }
    // Only the finished tasks are written back, old file or new after a kill.
    if (!clean || open.size > 0)
      writeDurably(
        this.path,
        [...this.done.values()]
          .flat()
          .map((line) => `${JSON.stringify(line)}\n`)
          .join(""),
      );
  }

  /** Appends one finished task's lines in one write; calls are serialised. */
  append(lines: ResultLine[]): Promise<void> {
    const body = lines.map((line) => `${JSON.stringify(line)}\n`).join("");
    // one failed write must not stop the later ones: each waits for the last to settle, not succeed
    this.writing = this.writing
      .catch(() => {})
      .then(async () => {
        await appendFile(this.path, body);
        this.done.set(lines[0]!.task_id, lines);
      });
    return this.writing;
  }
}
