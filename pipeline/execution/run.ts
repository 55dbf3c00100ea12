// Runs one block of model code in the sandbox and says what it came to. Python blocks of one dialogue
// can share a session (notebook.ts); every other language runs as a whole program. Untrusted code
// never runs anywhere else: the runner is the embedded sandbox or a remote /run_code server.
import { type LanguageName, sandboxLanguageId } from "../code/languages.js";
import { callSandbox } from "../sandbox/call.js";
import type { CodeRunner } from "../sandbox/types.js";
import { notebookProgram } from "./notebook.js";
import { classifyResponse, type ExecutionResult, withExpectedOutput } from "./result.js";

export interface RunBlockOptions {
  /** earlier Python blocks of the same session that ran cleanly (notebook-style) */
  previous?: readonly string[];
  stdin?: string;
  /** with a test: a clean run whose output differs becomes `wrong-output` */
  expected?: { input?: string; expected: string };
  runTimeoutS?: number;
  compileTimeoutS?: number;
  memoryMb?: number;
  signal?: AbortSignal;
}

/** Whether the sandbox has a runtime for the language. */
export function runnable(language: LanguageName | undefined): language is LanguageName {
  return language !== undefined && sandboxLanguageId(language) !== undefined;
}

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
    {
      ...(options.runTimeoutS !== undefined ? { runTimeoutS: options.runTimeoutS } : {}),
      ...(options.compileTimeoutS !== undefined ? { compileTimeoutS: options.compileTimeoutS } : {}),
      ...(options.memoryMb !== undefined ? { memoryMb: options.memoryMb } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    },
  );
  const result = classifyResponse(call.response, language);
  return options.expected ? withExpectedOutput(result, options.expected) : result;
}
