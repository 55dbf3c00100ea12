// Running model code and turning what happened into execution feedback.
export { SandboxOutageError } from "./errors.js";
export {
  DEFAULT_FEEDBACK_TEMPLATE,
  describeExecution,
  executionFeedback,
  type FeedbackTemplate,
  headAndTail,
} from "./feedback.js";
export { notebookProgram } from "./notebook.js";
export {
  classifyResponse,
  type ExecutionResult,
  type ExecutionStatus,
  type OutputMismatch,
  passed,
  sameOutput,
  withExpectedOutput,
} from "./result.js";
export { type RunBlockOptions, runBlock, runnable } from "./run.js";
