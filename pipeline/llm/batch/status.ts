// What `pnpm pipeline status` shows of a stage's batches: one row each, from its ledger; and, for
// `launch`, the commands that answer the `files` batches a stage waits for.
import { existsSync } from "node:fs";
import { type LlmConfig, ROLE_NAMES, roleConfig } from "../config.js";
import { batchCommand } from "./config.js";
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

/** The command of each `files` batch the stage wrote and nobody has answered yet (no output file). */
export function waitingCommands(stageDir: string, config: LlmConfig): string[] {
  const ledger = new BatchLedger(stageDir);
  return ledger.entries().flatMap((e) => {
    const batch = roleConfig(config, e.role)?.batch;
    if (e.state !== "waiting" || batch?.provider !== "files" || existsSync(ledger.path(e.output))) return [];
    return [batchCommand(batch, ledger.path(e.input), ledger.path(e.output), e.model)];
  });
}

/** Some role writes `files` batches. */
export function writesBatchFiles(config: LlmConfig): boolean {
  return ROLE_NAMES.some((role) => roleConfig(config, role)?.batch?.provider === "files");
}
