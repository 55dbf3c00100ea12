// Running model code and turning what happened into execution feedback: the only way from a stage to
// the sandbox (executeBlock for a block, callUnderPolicy for a judge's own request), and the results
// a stage keeps so that the sandbox never runs the same programs for it twice.
export { learnServerWorkers } from "../sandbox/index.js";
export type { CodeRunner, SandboxStop } from "../sandbox/types.js";
export { SandboxOutageError } from "./errors.js";
export {
  DEFAULT_FEEDBACK_TEMPLATE,
  describeExecution,
  executionFeedback,
  type FeedbackTemplate,
  headAndTail,
} from "./feedback.js";
export { KeptGroup, KeptResults, resultKey } from "./kept.js";
export { notebookProgram } from "./notebook.js";
export { type Attempted, withOutagePolicy } from "./outage.js";
export {
  classifyResponse,
  type ExecutionResult,
  type ExecutionStatus,
  languageRefused,
  type OutputMismatch,
  passed,
  sameOutput,
  withExpectedOutput,
} from "./result.js";
export {
  callUnderPolicy,
  type ExecuteOptions,
  executeBlock,
  type RunBlockOptions,
  runBlock,
  runnable,
  type SandboxGate,
} from "./run.js";
export {
  DEFAULT_BACKOFF_MS,
  DEFAULT_SANDBOX_ATTEMPTS,
  limitsOf,
  programsAtOnce,
  type SandboxSettings,
  sandboxSettingsShape,
} from "./settings.js";
