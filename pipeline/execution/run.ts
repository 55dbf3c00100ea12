// Runs one block of model code in the sandbox and says what it came to. Python blocks of one dialogue
// can share a session (notebook.ts); every other language runs as a whole program. Untrusted code
// never runs anywhere else: the runner is the embedded sandbox or a remote /run_code server.
// `executeBlock` and `callUnderPolicy` add the outage policy (outage.ts): the ways a stage takes.
import { type LanguageName, sandboxLanguageId } from "../code/languages.js";
import { type CallLimits, callSandbox, type SandboxCall } from "../sandbox/call.js";
import type { CodeRunner, RunCodeRequest, RunCodeResponse } from "../sandbox/types.js";
import { notebookProgram } from "./notebook.js";
import { withOutagePolicy } from "./outage.js";
import { classifyResponse, type ExecutionResult, languageRefused, withExpectedOutput } from "./result.js";
import { limitsOf, type SandboxSettings } from "./settings.js";

export interface RunBlockOptions extends CallLimits {
  /** earlier Python blocks of the same session that ran cleanly (notebook-style) */
  previous?: readonly string[];
  stdin?: string;
  /** with a test: a clean run whose output differs becomes `wrong-output` */
  expected?: { input?: string; expected: string };
}

/** Holds a run until the stage's count of programs at once allows it (a p-limit). */
export type SandboxGate = <T>(run: () => Promise<T>) => Promise<T>;

const ungated: SandboxGate = (run) => run();

/** Whether the sandbox has a runtime for the language. */
export function runnable(language: LanguageName | undefined): language is LanguageName {
  return language !== undefined && sandboxLanguageId(language) !== undefined;
}

/** One try, no retry: a sandbox that fails is a `sandbox-error` result. */
export async function runBlock(
  runner: CodeRunner,
  code: string,
  language: LanguageName,
  options: RunBlockOptions = {},
): Promise<ExecutionResult> {
  const id = sandboxLanguageId(language);
  if (!id) throw new Error(`runBlock: the sandbox has no runtime for ${language}`);
  const program =
    language === "python" && options.previous?.length ? notebookProgram(options.previous, code) : code;
  const call = await callSandbox(
    runner,
    { code: program, language: id, ...(options.stdin !== undefined ? { stdin: options.stdin } : {}) },
    options,
  );
  const result = classifyResponse(call.response, language);
  return options.expected ? withExpectedOutput(result, options.expected) : result;
}

/** What a block needs besides the stage's settings; `gate` holds it until a program may start. */
export type ExecuteOptions = Pick<RunBlockOptions, "previous" | "stdin" | "expected" | "signal"> & {
  gate?: SandboxGate;
};

/**
 * A block under the stage's settings and the outage policy: the result of the first try the sandbox
 * ran (`language-unavailable` included, which no retry changes), or SandboxOutageError.
 */
export function executeBlock(
  runner: CodeRunner,
  code: string,
  language: LanguageName,
  settings: SandboxSettings,
  options: ExecuteOptions = {},
): Promise<ExecutionResult> {
  const gate = options.gate ?? ungated;
  const limits = limitsOf(settings, options.signal);
  return withOutagePolicy(
    async () => {
      const result = await gate(() => runBlock(runner, code, language, { ...options, ...limits }));
      const failure = result.status === "sandbox-error" ? result.message || "sandbox error" : undefined;
      return { value: result, failure };
    },
    settings,
    `a ${language} program`,
    options.signal,
  );
}

/**
 * A request as it is, under the outage policy, for judges that read the sandbox's answer themselves
 * (test harnesses, one run per stdin case). A refusal for a missing language is returned, not retried.
 */
export function callUnderPolicy(
  runner: CodeRunner,
  request: RunCodeRequest,
  limits: CallLimits,
  policy: Pick<SandboxSettings, "sandbox_attempts" | "backoff_ms">,
  gate: SandboxGate = ungated,
): Promise<SandboxCall> {
  return withOutagePolicy(
    async () => {
      const call = await gate(() => callSandbox(runner, request, limits));
      return { value: call, failure: outageOf(call.response) };
    },
    policy,
    `a ${request.language} program`,
    limits.signal,
  );
}

/** Why a response says nothing about the code (the sandbox failed), or undefined. */
function outageOf(response: RunCodeResponse): string | undefined {
  if (response.status !== "SandboxError" || languageRefused(response)) return undefined;
  return response.message || "sandbox error";
}
