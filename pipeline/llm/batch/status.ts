// What `pnpm pipeline status` shows of a stage's batches: one row each, from its ledger.
import { BatchLedger } from "./ledger.js";

export interface BatchRow {
  role: string;
  /** the provider's batch id, or the input file of a `files` batch */
  id: string;
  state: string;
  done: number;
  failed: number;
  total: number;
  /** ms since it was sent */
  ageMs: number;
  round: number;
}

export function batchRows(stageDir: string, now = Date.now()): BatchRow[] {
  return new BatchLedger(stageDir).entries().map((e) => ({
    role: e.role,
    id: e.batchId ?? e.input,
    state: e.state === "collected" ? (e.ended ?? "collected") : e.state,
    done: e.done ?? 0,
    failed: Object.keys(e.failed ?? {}).length,
    total: e.total,
    ageMs: now - Date.parse(e.createdAt),
    round: e.round,
  }));
}
