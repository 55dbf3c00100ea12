// What each endpoint (LLM replica, /run_code server) did for each stage, from the usage (and the
// sandbox programs) in the stages' manifests: for `status` after a run, and the same figures the run
// logs as it ends.
import type { StageStatus } from "../runner.js";
import { meanLatencyMs } from "../usage.js";
import { printTable } from "./table.js";

/** One row per stage and endpoint; nothing when no stage has sent anything to one. */
export function printEndpointUsage(
  rows: readonly StageStatus[],
  out: NodeJS.WritableStream = process.stdout,
): void {
  const table: (string | number)[][] = [];
  for (const row of rows) {
    for (const [name, s] of Object.entries(row.manifest?.usage?.endpoints ?? {})) {
      const mean = meanLatencyMs(s);
      // a /run_code server of several: the programs it ran for the committed records
      const ran = row.manifest?.sandbox?.endpoints?.[name];
      table.push([
        row.stage,
        name,
        s.requests,
        s.failures,
        s.ejections,
        mean === undefined ? "-" : `${Math.round(mean)} ms`,
        ran ? ran.runs : "",
        ran ? `${(ran.busyMs / 1000).toFixed(1)} s` : "",
      ]);
    }
  }
  if (table.length === 0) return;
  out.write("\n");
  printTable(
    ["stage", "endpoint", "requests", "failed", "ejections", "mean latency", "programs", "busy"],
    table,
    out,
  );
}
