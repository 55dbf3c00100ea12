// The paper's steps, in pipeline order (every stage comes after its upstream stages).
import type { Stage } from "../pipeline/stage.js";
import { dedupStage } from "./dedup.js";
import { downloadStage } from "./download.js";
import { filterStage } from "./filter.js";
import { normalizeStage } from "./normalize.js";
import { packStage } from "./pack.js";

export const STAGES: readonly Stage<unknown>[] = [
  downloadStage,
  normalizeStage,
  dedupStage,
  filterStage,
  packStage,
] as Stage<unknown>[];
