// A stage's manifest: what produced its outputs (config hash, upstream output hashes), how far it got,
// counts, LLM usage and timings. Written atomically (temp file + rename), so it is never torn.
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { SandboxUsage, UsageTotals } from "../usage.js";
import { StoreError } from "./parts.js";
import type { PartSeal } from "./seal.js";

export type StoredState = "running" | "partial" | "complete";

export interface StageCounts {
  /** input records handled (done) */
  in: number;
  out: number;
  rejected: number;
  /** inputs whose last attempt failed for an operational reason; retried on the next run */
  failed: number;
}

export interface Manifest {
  version: 1;
  stage: string;
  state: StoredState;
  configHash: string;
  /** what configHash hashed, setting by setting (pipeline/hash.ts settingsOf), to name what changed */
  configSettings?: Record<string, string>;
  /** upstream stage -> its outputHash when this stage started */
  upstream: Record<string, string>;
  /**
   * set by `run --force` or `reset` of an upstream stage: outputs must be recomputed, unless every
   * upstream ends up with the content recorded in `upstreamContent`
   */
  staleReason?: string;
  /** upstream stage -> its content (outputs, rejects, summary: status.ts contentOf) when this stage started */
  upstreamContent?: Record<string, string>;
  counts: StageCounts;
  /** order-independent hash of the outputs; set when complete */
  outputHash?: string;
  /** the same of the rejects */
  rejectsHash?: string;
  usage?: UsageTotals;
  /** programs the sandbox ran for the stage and their busy time, summed over its runs (usage.ts) */
  sandbox?: SandboxUsage;
  runs: number;
  pid?: number;
  /** the machine `pid` runs on: shards of one stage run on many */
  host?: string;
  /** set in the manifest of shard K of N (`<stage>/shards/K-of-N/manifest.json`) */
  shard?: { index: number; count: number };
  /** a shard's: the config file (absolute), --set overrides and --limit it was run with, for its rerun command */
  invocation?: { config?: string; sets?: string[]; limit?: number };
  startedAt: string;
  updatedAt: string;
  finishedAt?: string;
  /** wall time spent running, summed over resumed runs */
  elapsedMs: number;
  stats?: Record<string, unknown>;
  /** the stage's `ctx.stat` counters, summed over its committed records (and over shards) */
  counters?: Record<string, number>;
  /** reject reason -> rejects the stage committed with it */
  rejectReasons?: Record<string, number>;
  /** record-wise stages: digest of the input ids seen so far, checked when a later run resumes */
  inputCheck?: { position: number; digest: string };
  /** why the last run stopped early (an error, or failed records), for `status` */
  lastError?: string;
  /** set when complete: each part's size and SHA-256, checked whenever the stage is read */
  parts?: PartSeal[];
}

export const MANIFEST_FILE = "manifest.json";

export function readManifest(stageDir: string): Manifest | undefined {
  try {
    return JSON.parse(readFileSync(join(stageDir, MANIFEST_FILE), "utf8")) as Manifest;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new StoreError(
      `the manifest of ${stageDir} is unreadable (${(error as Error).message}); run \`pnpm pipeline reset\` on that stage`,
    );
  }
}

export function writeManifest(stageDir: string, manifest: Manifest): void {
  writeDurably(join(stageDir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
}

/** Replaces `path` with `text`, durable before it becomes visible: a kill or a power loss leaves old or new. */
export function writeDurably(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, text, { flush: true });
    renameSync(tmp, path);
  } catch (error) {
    // a full disk: no half-written file left to take the room the rerun needs
    rmSync(tmp, { force: true });
    throw error;
  }
  syncDir(dirname(path));
}

export function syncDir(dir: string): void {
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
