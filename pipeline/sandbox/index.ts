// The code sandbox: runs untrusted model-written code in many languages, isolated, and answers in
// SandboxFusion's /run_code shape. Stages and the evaluator only see `CodeRunner`; whether it runs
// here (embedded) or on a remote /run_code server is the config's business.
import { HttpSandboxClient } from "./client.js";
import type { SandboxConfig } from "./config.js";
import { EmbeddedSandbox } from "./embedded.js";
import type { CodeRunner } from "./types.js";

export { learnServerWorkers } from "./capacity.js";
export { HttpSandboxClient } from "./client.js";
export { defaultWorkers, type SandboxConfig, sandboxConfigSchema } from "./config.js";
export { EmbeddedSandbox, type EmbeddedSandboxOptions, type IsolationReport } from "./embedded.js";
export {
  SandboxBusyError,
  SandboxClosedError,
  SandboxFaultError,
  SandboxRemoteError,
  SandboxRequestError,
} from "./errors.js";
export { findLanguage, LANGUAGE_SPECS, type LanguageSpec, languageIds } from "./languages.js";
export { parseRunCodeRequest, runStatus } from "./request.js";
export { type LanguageInfo, listLanguages } from "./toolchains.js";
export type * from "./types.js";

/** The embedded sandbox, or a client of `config.url` when one is set. */
export function createCodeRunner(config: SandboxConfig): CodeRunner {
  return config.url ? new HttpSandboxClient(config) : new EmbeddedSandbox(config);
}
