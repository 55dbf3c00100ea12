// The raw record of one evaluation's sandbox call: the steps with their command lines, status, exit
// code, time and memory, and the program's output. BabelCode runs, AutoEval and CommonOJ all write
// it so their raw results read alike; the call itself is the sandbox's (sandbox/call.ts).
import type { LanguageName } from "../code/languages.js";
import { type CallLimits, commandLines, type SandboxCall } from "../sandbox/call.js";
import type { CommandRunResult } from "../sandbox/types.js";
import type { CommandRecord, PredictionResult } from "./types.js";

/** The sandbox's limits, and how much of each call the raw results keep. */
export interface RunLimits extends CallLimits {
  /**
   * Write each step's command line from the sandbox's language table into the raw results (default
   * true). Turn it off for a remote server, whose commands the table does not know.
   */
  recordCommands?: boolean;
}

function commandRecord(
  step: CommandRecord["step"],
  result: CommandRunResult,
  command: string[] | null | undefined,
): CommandRecord {
  return {
    step,
    command: command ?? null,
    status: result.status,
    return_code: result.return_code,
    execution_time: result.execution_time,
    peak_memory_kb: result.peak_memory_kb ?? null,
  };
}

/** The raw record of one call; the caller fills in the outcome and the test results. */
export function rawResult(
  call: SandboxCall,
  who: { qid: string; id: string; language: LanguageName },
  options: { recordCommands?: boolean } = {},
): PredictionResult {
  const { request, response } = call;
  const { compile_result: compile, run_result: run } = response;
  const lines = options.recordCommands === false ? null : commandLines(request);
  const result: PredictionResult = {
    qid: who.qid,
    id: who.id,
    language: who.language,
    outcome: "Had Error",
    test_results: {},
    num_tests: 0,
    num_passed: 0,
    sandbox_status: response.status,
    commands: [],
    stdout: run?.stdout ?? "",
    stderr: run?.stderr ?? "",
    main_removed: false,
    elapsed_s: call.elapsed_s,
    code: request.code,
  };
  if (response.message) result.sandbox_message = response.message;
  if (compile) result.commands.push(commandRecord("compile", compile, lines?.compile));
  if (run) result.commands.push(commandRecord("run", run, lines?.run));
  if (compile?.stderr) result.compile_stderr = compile.stderr;
  return result;
}
