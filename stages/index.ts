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
import { DIALOGUE_STAGES, defineValidateStage } from "./validate.js";

// Every stage up to the dialogue stages. validate reads whichever dialogue stages are registered here:
// the runner requires every upstream of a stage to be registered and complete (see docs/export.md).
const UP_TO_DIALOGUES = [
  downloadStage,
  normalizeStage,
  dedupStage,
  filterStage,
  packStage,
  simulateStage,
  correctStage,
  leetcodeStage,
] as Stage<unknown>[];

export const STAGES: readonly Stage<unknown>[] = [
  ...UP_TO_DIALOGUES,
  defineValidateStage(DIALOGUE_STAGES.filter((name) => UP_TO_DIALOGUES.some((s) => s.name === name))),
  exportStage,
] as Stage<unknown>[];
