// The paper's steps, in pipeline order (every stage comes after its upstream stages).
import type { Stage } from "../pipeline/stage.js";

export const STAGES: readonly Stage<unknown>[] = [] as Stage<unknown>[];
