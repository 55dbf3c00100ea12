// What the sandbox said, kept with the dialogue. The LLM cache replays the model's side of a dialogue
// after a `kill -9`; this journal replays the sandbox's side, so a redone record shows the same
// execution results (output with a timestamp, a random number, a time-out at the edge of the limit)
// and therefore sends the same conversations, which the LLM cache then answers for free.
//
// One small append-only JSON-lines file per record under the stage's work dir, one line per run,
// keyed by everything the run depended on (the conversation before it, the code, the language, the
// limits). Appended before the result is used, so no later request can have seen a result the journal
// lacks. A line torn by a kill is skipped on reading, and the next run appended starts a line of its
// own. Read and appended synchronously: a small file's open, write and close take tens of
// microseconds, a third of the CPU the same calls cost through libuv's thread pool. `reset --purge`
// forgets the journal; a forced rerun replays it as it replays cached LLM answers.
//
// Each line also keeps what the run cost in the sandbox (`x`: programs and busy time), so a redone
// record that replays it counts it as the run that made it did (the manifest's `sandbox`), once.
import { createHash } from "node:crypto";
import { appendFileSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import type { ExecutionStatus } from "../../pipeline/execution/index.js";
import { ReplayCosts, type SandboxUsage } from "../../pipeline/usage.js";

/** One sandbox run as the dialogue uses it: what happened, and the feedback turn it was rendered to. */
export interface JournaledRun {
  status: ExecutionStatus;
  exitCode: number | null;
  signal: string | null;
  timeS: number | null;
  truncated: boolean;
  message?: string;
  /** the "Execution result:" turn */
  feedback: string;
  /** the last characters of the error output (stderr, else stdout), for naming the error */
  errorTail: string;
}

export class ExecutionJournal {
  /** the subdirs this journal has made (or found): not made again for every run appended */
  private readonly made = new Set<string>();

  constructor(readonly dir: string) {}

  async open(recordId: string): Promise<RecordJournal> {
    const name = createHash("sha1").update(recordId).digest("hex");
    const file = path.join(this.dir, name.slice(0, 2), `${name}.jsonl`);
    const runs = new Map<string, JournaledRun>();
    const costs = new ReplayCosts();
    let text = "";
    try {
      text = readFileSync(file, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
    for (const line of text.split("\n")) {
      if (line === "") continue;
      try {
        const entry = JSON.parse(line) as { key: string; run: JournaledRun; x?: unknown };
        runs.set(entry.key, entry.run);
        costs.loaded(entry.key, entry.x);
      } catch {
        // torn by a kill while appending: that run is simply done again
      }
    }
    // A torn last line has no newline: the next line must not be glued onto it and lost with it.
    return new RecordJournal(file, runs, text !== "" && !text.endsWith("\n"), this.made, costs);
  }
}

export class RecordJournal {
  constructor(
    private readonly file: string,
    private readonly runs: Map<string, JournaledRun>,
    private torn = false,
    /** dirs known to exist, shared by the records of one journal */
    private readonly made = new Set<string>(),
    /** what the runs read back from the file cost, not yet counted by this record */
    private readonly costs = new ReplayCosts(),
  ) {}

  get(key: string): JournaledRun | undefined {
    return this.runs.get(key);
  }

  /**
   * What the sandbox ran for the run under `key` when an earlier process made it, the first time this
   * record replays it; nothing after that, nor for a run this record made (counted as it ran).
   */
  replayCost(key: string): SandboxUsage | undefined {
    return this.costs.take(key);
  }

  /** Appends a run, with `cost`: what the sandbox ran for it. */
  async put(key: string, run: JournaledRun, cost?: SandboxUsage): Promise<void> {
    this.runs.set(key, run);
    this.costs.made(key);
    const dir = path.dirname(this.file);
    if (!this.made.has(dir)) this.makeDir(dir);
    const line = `${this.torn ? "\n" : ""}${JSON.stringify({ key, run, ...(cost ? { x: cost } : {}) })}\n`;
    this.torn = false;
    try {
      appendFileSync(this.file, line);
    } catch (error) {
      // the dir went away since it was made (a purge of the work dir): make it again
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      this.makeDir(dir);
      appendFileSync(this.file, line);
    }
  }

  private makeDir(dir: string): void {
    mkdirSync(dir, { recursive: true });
    this.made.add(dir);
  }
}

/** A run as a dialogue's meta shows it (simulate's executions, correct's mistake and fix). */
export function runMeta(run: JournaledRun) {
  return { status: run.status, exit_code: run.exitCode, time_s: run.timeS, truncated: run.truncated };
}

/** The journal key of a run: a digest of everything its result depends on. */
export function runKey(parts: unknown): string {
  return createHash("sha256").update(JSON.stringify(parts)).digest("hex");
}

/** The line of a failed run that names its error (Node and Java put a stack trace after it). */
export function errorLine(run: Pick<JournaledRun, "errorTail" | "status">): string {
  if (run.status === "timeout") return "timed out";
  const lines = run.errorTail.split("\n").map((l) => l.trim());
  const named = lines.filter((l) => /\b\w*(?:Error|Exception)\b|\berror\b/i.test(l) && !/^at\s/.test(l));
  return (named.at(-1) ?? lines.filter((l) => l !== "").at(-1) ?? "").slice(0, 300);
}
