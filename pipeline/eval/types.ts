// The shapes evaluation reads and writes: BabelCode questions and predictions, the generated test
// programs, and the per-prediction results and metrics it reports.
import type { LanguageName } from "../code/languages.js";
import { UserError } from "../errors.js";
import type { SchemaType } from "./schema-type.js";

/** One test case of a question: argument values by parameter name, and the expected return value. */
export interface TestCase {
  idx: string;
  inputs: Record<string, unknown>;
  outputs: unknown;
}

export interface QuestionParam {
  name: string;
  type: SchemaType;
}

/** A BabelCode question, with its types parsed and its values checked. */
export interface Question {
  questionId: string;
  title: string;
  params: QuestionParam[];
  returnType: SchemaType;
  testCases: TestCase[];
  /** Default entry function and class when a prediction names none. */
  entryFnName?: string;
  entryClsName?: string;
}

/** Test code for one question in one language, as written by `eval generate`. */
export interface GeneratedTest {
  qid: string;
  title: string;
  language: LanguageName;
  /** SandboxFusion language id the program runs under. */
  sandbox_language: string;
  entry_fn_name?: string;
  entry_cls_name?: string;
  test_case_ids: string[];
  /** The program, with PLACEHOLDER_CODE_BODY where the prediction goes and PLACEHOLDER_CALLEE at calls. */
  test_code: string;
}

export interface GenerationFailure {
  qid: string;
  language: LanguageName | string;
  reason: string;
}

/** A model's answer to one question, as BabelCode reads it (`entry_point`/`class_name` accepted too). */
export interface Prediction {
  qid: string;
  id: string;
  language: LanguageName;
  code: string;
  entry_fn_name?: string;
  entry_cls_name?: string;
}

export const OUTCOMES = ["Passed", "Failed Tests", "Had Error", "Had Runtime Error", "Timed Out"] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** What happened to one test case: PASSED, FAILED, MISSING (never reported), or an exception name. */
export type TestResult = string;

/** One sandbox step (compile or run) as the raw results record it. */
export interface CommandRecord {
  step: "compile" | "run";
  /** the command line from the sandbox's language table; null when unknown (a remote server) */
  command: string[] | null;
  status: string;
  return_code: number | null;
  /** seconds */
  execution_time: number | null;
  peak_memory_kb?: number | null;
}

export interface PredictionResult {
  qid: string;
  id: string;
  language: LanguageName;
  outcome: Outcome;
  /** Why the outcome is not Passed, in a few words (e.g. "compile error", "2 tests missing"). */
  reason?: string;
  test_results: Record<string, TestResult>;
  num_tests: number;
  num_passed: number;
  /** SandboxFusion's status of the run: Success, Failed or SandboxError. */
  sandbox_status: string;
  sandbox_message?: string;
  commands: CommandRecord[];
  stdout: string;
  stderr: string;
  compile_stderr?: string;
  /** True when the prediction's own main was removed because the harness brings one. */
  main_removed: boolean;
  /** Wall-clock seconds for the whole request, as seen by the evaluator. */
  elapsed_s: number;
  code: string;
}

/** The user gave evaluation input it cannot use; the message says which file, which line and what to do. */
export class EvalInputError extends UserError {}
