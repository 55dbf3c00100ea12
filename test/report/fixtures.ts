// Hand-made stage manifests for the report tests: the counts, usage and summaries a small run of
// every stage would leave, in the shapes the stages write and their schemas read (filter's funnel,
// pack's and simulate's DialogueTally and figures, validate's summary, export's files and counts).
// `correct` and `leetcode` have not run.
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { beforeEach } from "vitest";
import { paperShape } from "../../pipeline/dialogue.js";
import { StageRegistry } from "../../pipeline/registry.js";
import type { ReportingStage, StageView } from "../../pipeline/report/contract.js";
import { collectReport } from "../../pipeline/report/index.js";
import type { Manifest } from "../../pipeline/store/manifest.js";
import type { UsageTotals } from "../../pipeline/usage.js";
import { STAGES } from "../../stages/index.js";
import { tempDir } from "../support/temp-dir.js";

/** The stages as the CLI hands them to the report. */
export const REGISTRY = new StageRegistry(STAGES);

const usage = (requests: number, prompt: number, completion: number, cost: number): UsageTotals => ({
  requests,
  cachedRequests: Math.floor(requests / 10),
  failedRequests: 1,
  promptTokens: prompt,
  completionTokens: completion,
  costUsd: cost,
});

function manifest(stage: string, counts: [number, number, number], extra: Partial<Manifest> = {}): Manifest {
  return {
    version: 1,
    stage,
    state: "complete",
    configHash: "fixture",
    upstream: {},
    counts: { in: counts[0], out: counts[1], rejected: counts[2], failed: 0 },
    runs: 1,
    startedAt: "2025-01-01T00:00:00.000Z",
    updatedAt: "2025-01-01T00:10:00.000Z",
    finishedAt: "2025-01-01T00:10:00.000Z",
    elapsedMs: 61_000,
    ...extra,
  };
}

export const FULL_RUN: Manifest[] = [
  manifest("download", [5, 5, 0]),
  manifest("normalize", [2900, 2872, 28]),
  manifest("dedup", [2872, 2790, 82]),
  manifest("filter", [2790, 1512, 1278], {
    usage: usage(4650, 2_100_000, 310_000, 4.12),
    stats: {
      in: 2790,
      kept: 1512,
      rejected: { "complexity-round-1": 921, "complexity-round-2": 345, unscored: 12 },
      rounds: [
        {
          round: 1,
          prompt: "complexity-1",
          scored: 2790,
          histogram: { "1": 120, "2": 301, "3": 488, "4": 1143, "5": 726, unscored: 12 },
          reminded: 40,
          passed: 1869,
        },
        {
          round: 2,
          prompt: "complexity-2",
          scored: 1869,
          histogram: { "1": 20, "2": 95, "3": 242, "4": 1010, "5": 502, unscored: 0 },
          reminded: 7,
          passed: 1512,
        },
      ],
      by_resource: { magicoder: { in: 900, kept: 470 }, evolinstruct: { in: 1890, kept: 1042 } },
      by_lang: {
        python: { in: 1800, kept: 1101 },
        javascript: { in: 240, kept: 93 },
        java: { in: 200, kept: 80 },
        sql: { in: 150, kept: 66 },
        cpp: { in: 130, kept: 51 },
        rust: { in: 90, kept: 60 },
        go: { in: 80, kept: 41 },
        unknown: { in: 100, kept: 20 },
      },
    },
  }),
  manifest("pack", [1001, 160, 3], {
    stats: {
      "single-turn-packing": {
        dialogues: 160,
        turns: 402,
        turns_per_dialogue: 2.51,
        by_lang: { python: 160 },
        paper: { dialogues: 16600, turns_per_dialogue: 2 },
      },
      single_turns: 1001,
      packed: 402,
      bypassed: 12,
      left_single: 587,
      other_languages: { rust: 60 },
      join: [1],
      reading: "table",
      paper: { single_turns: 105_000, dialogues: 16_600, turns: 33_500 },
    },
  }),
  manifest("simulate", [1512, 480, 20], {
    usage: usage(2900, 5_400_000, 1_900_000, 61.5),
    stats: {
      "interaction-simulation": {
        dialogues: 480,
        turns: 1430,
        turns_per_dialogue: 2.98,
        by_lang: { python: 400, javascript: 80 },
        paper: { dialogues: 51000, turns_per_dialogue: 3 },
      },
      passing: 430,
      passing_share: 0.896,
      capped: 31,
      ends_unrun: 9,
      feedback_categories: { "Simple Golden Feedback": 120, "Detailed Code Feedback": 200 },
      execution_statuses: { success: 900, "runtime-error": 210 },
      iterations: { "1": 300, "2": 180 },
      rejects: { "no-code": 20 },
    },
  }),
  manifest("validate", [640, 590, 50], {
    stats: {
      dialogues: { validated: 640, kept: 590, dropped: 50, malformed: 0 },
      by_method: {
        "single-turn-packing": {
          python: {
            passed: 120,
            failed: 12,
            timeout: 2,
            "not-runnable": 24,
            "no-code": 2,
            kept: 146,
            dropped: 14,
          },
        },
        "interaction-simulation": {
          python: {
            passed: 300,
            failed: 25,
            timeout: 5,
            "not-runnable": 70,
            "no-code": 0,
            kept: 370,
            dropped: 30,
          },
          javascript: {
            passed: 60,
            failed: 6,
            timeout: 0,
            "not-runnable": 14,
            "no-code": 0,
            kept: 74,
            dropped: 6,
          },
        },
      },
      blocks_by_language: {
        python: { passed: 900, failed: 60, timeout: 9, "not-runnable": 140 },
        javascript: { passed: 120, failed: 9, timeout: 0, "not-runnable": 20 },
      },
      not_runnable_reasons: { "missing-package": 90, "needs-network": 30, fragment: 54 },
      dropped_by: { failed: 43, timeout: 7, "silent-failure": 3 },
      gates: {
        "silent-failure": { "single-turn-packing": 3 },
        "wrong-language": { "interaction-simulation": 2, "single-turn-packing": 1 },
      },
      kept: {
        "single-turn-packing": {
          dialogues: 146,
          turns: 366,
          turns_per_dialogue: 2.51,
          by_lang: { python: 146 },
          paper: { dialogues: 16600, turns_per_dialogue: 2 },
        },
        "interaction-simulation": {
          dialogues: 444,
          turns: 1321,
          turns_per_dialogue: 2.98,
          by_lang: { python: 370, javascript: 74 },
          paper: { dialogues: 51000, turns_per_dialogue: 3 },
        },
      },
    },
  }),
  manifest("export", [2102, 5, 0], {
    stats: {
      dir: "/data/export",
      files: [
        { name: "code-feedback.jsonl", rows: 590, bytes: 2_400_000, sha256: "a".repeat(64) },
        { name: "code-feedback.parquet", rows: 590, bytes: 900_000, sha256: "b".repeat(64) },
        { name: "filtered-instruction.jsonl", rows: 1512, bytes: 3_100_000, sha256: "c".repeat(64) },
        { name: "filtered-instruction.parquet", rows: 1512, bytes: 1_200_000, sha256: "d".repeat(64) },
        { name: "README.md", rows: 0, bytes: 4_000, sha256: "e".repeat(64) },
      ],
      code_feedback: {
        dialogues: 590,
        by_method: {},
        validation: { passed: 420, "not-runnable": 108 },
        keep_system: false,
      },
      shape: paperShape(
        {
          "single-turn-packing": { dialogues: 146, turns: 366 },
          "interaction-simulation": { dialogues: 444, turns: 1321 },
        },
        REGISTRY.methods,
      ),
      dialogue_stages: { pack: "ran", simulate: "ran", correct: "ran", leetcode: "ran" },
      filtered_instruction: { rows: 1512, by_lang: {}, by_source: {}, languages: [] },
      sources: [],
      models: {},
    },
  }),
];

export async function writeManifests(dataDir: string, manifests: readonly Manifest[]): Promise<void> {
  for (const m of manifests) {
    await mkdir(path.join(dataDir, m.stage), { recursive: true });
    await writeFile(path.join(dataDir, m.stage, "manifest.json"), JSON.stringify(m, null, 2));
  }
}

/** A data directory of its own for each test of the calling file, removed after it. */
export function dataDirPerTest(prefix: string): { readonly path: string } {
  const dir = { path: "" };
  beforeEach(() => {
    dir.path = tempDir(prefix);
  });
  return dir;
}

/** What `stage`'s flow parts (or its section `section`) are handed for the manifests in `dataDir`. */
export function stageView<S>(dataDir: string, stage: ReportingStage<S>, section?: string): StageView<S> {
  return collectReport(dataDir, { registry: REGISTRY }).view.forStage(stage, section);
}
