// The paper's steps, in pipeline order (every stage comes after its upstream stages).
import type { Stage } from "../pipeline/stage.js";
import { correctStage } from "./correct.js";
import { dedupStage } from "./dedup.js";
import { downloadStage } from "./download.js";
import { exportStage } from "./export.js";
import { filterStage } from "./filter.js";
import { leetcodeStage } from "./leetcode.js";
import { normalizeStage } from "./normalize.js";
import { packStage } from "./pack.js";
import { simulateStage } from "./simulate.js";
import { validateStage } from "./validate.js";

export const STAGES: readonly Stage<unknown>[] = [
  downloadStage,
  normalizeStage,
  dedupStage,
  filterStage,
  packStage,
  simulateStage,
  correctStage,
  leetcodeStage,
  validateStage,
  exportStage,
] as Stage<unknown>[];
