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
export { type ExecutionResult, type ExecutionStatus, passed } from "./result.js";
export { callUnderPolicy, executeBlock, runBlock, runnable } from "./run.js";
export { programsAtOnce, type SandboxSettings, sandboxSettingsShape } from "./settings.js";
