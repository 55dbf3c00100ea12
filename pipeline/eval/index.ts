// Evaluation of code through the sandbox: BabelCode-style test generation and prediction runs,
// SandboxFusion's AutoEval and CommonOJ dataset types, outcome rules and pass@k. Every function that
// runs code takes a `CodeRunner`, so stages pass the one they already hold.

export { callSandbox, commandLines, type SandboxCall } from "../sandbox/call.js";
export { sandboxErrorResponse } from "../sandbox/request.js";
export {
  answerCode,
  buildAutoEvalProgram,
  executionLanguageId,
  INSERT_MARKER,
  runAutoEval,
} from "./autoeval.js";
export { type CommonOJOptions, judgeCase, runCommonOJ, withCommonOJTimeouts } from "./common-oj.js";
export { type EvalConfig, evalConfigSchema } from "./config.js";
export {
  buildProgram,
  type EvaluateOptions,
  type EvaluationRun,
  evaluatePredictions,
  type TestIndex,
} from "./evaluate.js";
export {
  type AutoEvalProblem,
  type CommonOJProblem,
  type FusionAnswer,
  parseAutoEvalProblem,
  parseCommonOJProblem,
  parseFusionAnswers,
  type StdioCase,
} from "./fusion-data.js";
export { evaluateAnswers, type FusionRunOptions } from "./fusion-run.js";
export {
  ALL_LANGUAGES,
  type GenerationResult,
  generateTestDir,
  generateTests,
  readTestDir,
  sandboxLanguages,
} from "./generate.js";
export {
  fillProgram,
  HARNESSES,
  type Harness,
  harnessFor,
  harnessLanguages,
  NO_HARNESS,
  UnsupportedTypeError,
} from "./harness/index.js";
export { type NamingConvention, styleName } from "./harness/naming.js";
export { computeMetrics, type EvalMetrics, type GroupMetrics, type QuestionCounts } from "./metrics.js";
export { type OutputJudgeOptions, outputsMatch } from "./oj-judge.js";
export { FAILED, type Judgement, judgePrediction, MISSING, PASSED, parseTestResults } from "./outcome.js";
export { meanPassAtK, parseKs, passAtK } from "./pass-at-k.js";
export { parsePredictions, readPredictions } from "./predictions.js";
export { parseQuestion } from "./question.js";
export { type RunLimits, rawResult } from "./raw-result.js";
export { ProgressBar, summaryTable, writeEvalOutputs } from "./report.js";
export { parseSchemaType, SchemaError, type SchemaType, tolerance } from "./schema-type.js";
export * from "./types.js";
