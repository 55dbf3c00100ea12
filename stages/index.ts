// The paper's steps, in pipeline order (every stage comes after its upstream stages). This list is the
// one place stage names come from: the CLI hands it down, the runner and the report read names and the
// dialogue methods each stage declares from it (pipeline/registry.ts).
import type { Stage } from "../pipeline/stage.js";
import { auditStage } from "./audit.js";
import { correctStage } from "./correct.js";
import { dedupStage } from "./dedup.js";
import { downloadStage } from "./download.js";
import { exportStage } from "./export.js";
import { filterStage } from "./filter.js";
import { leetcodeStage } from "./leetcode.js";
import { normalizeStage } from "./normalize.js";
import { packStage } from "./pack.js";
import { simulateStage } from "./simulate.js";
import { defineValidateStage } from "./validate.js";

const BEFORE_VALIDATION = [
  downloadStage,
  normalizeStage,
  dedupStage,
  filterStage,
  packStage,
  simulateStage,
  correctStage,
  leetcodeStage,
  auditStage,
] as Stage<unknown>[];

/** Validation reads every stage before it that makes dialogues, in this order. */
export const validateStage = defineValidateStage(
  BEFORE_VALIDATION.filter((s) => typeof s.methods === "function" || s.methods?.length).map((s) => s.name),
);

export const STAGES: readonly Stage<unknown>[] = [
  ...BEFORE_VALIDATION,
  validateStage,
  exportStage,
] as Stage<unknown>[];
