// A sandbox run as a dialogue's meta shows it: simulate's executions, correct's mistake, fix and
// checks. The same fields in the same order wherever a dialogue records a run.
import type { JournaledRun } from "./journal.js";

export function runMeta(run: JournaledRun) {
  return { status: run.status, exit_code: run.exitCode, time_s: run.timeS, truncated: run.truncated };
}
