// `eval model`: the paper's evaluation of a model on HumanEval(+) and MBPP(+), single-turn and
// multi-turn with execution, human or oracle feedback. See docs/eval.md.
export {
  type BenchmarkTask,
  type LoadedBenchmark,
  loadBenchmark,
  parseTaskRow,
  readTaskRows,
  type TaskJudge,
  type TaskRow,
} from "./benchmarks.js";
export {
  BENCHMARK_NAMES,
  type BenchmarkName,
  type BenchmarkSource,
  DEFAULT_BENCHMARK_SOURCES,
  type EvalModelConfig,
  evalModelConfigSchema,
  FEEDBACK_KINDS,
  type FeedbackKind,
} from "./config.js";
export { evaluateModel, type ModelEvalOptions, type ModelEvalReport } from "./evaluate-model.js";
export { completeSolution, type Judgement, judgeProgram, judgeSolution } from "./judge.js";
export { computeModelMetrics, type ModelEvalMetrics, type RoundFigure, roundsTable } from "./metrics.js";
export {
  fillPlaceholders,
  guidancePrompt,
  PROMPT_NAMES,
  promptTexts,
  SEED_FENCE,
  taskPrompt,
} from "./prompts.js";
export { type InvalidTaskRecord, type ResultLine, ResultsFile, type RunIdentity } from "./results-file.js";
export {
  evaluateTask,
  NO_CODE_RESULT,
  ROUND_OUTCOMES,
  type RoundOutcome,
  type RoundRecord,
} from "./session.js";
