// Evaluation of code through the sandbox: BabelCode-style test generation and prediction runs,
// SandboxFusion's AutoEval and CommonOJ dataset types, outcome rules and pass@k. Every function that
// runs code takes a `CodeRunner`, so stages pass the one they already hold.

export { runCommonOJ } from "./common-oj.js";
export { fillProgram, harnessFor } from "./harness/index.js";
export { styleName } from "./harness/naming.js";
export { judgePrediction } from "./outcome.js";
export { parseQuestion } from "./question.js";
export type { Outcome, Question } from "./types.js";
