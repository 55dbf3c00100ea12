// Runs one solution on its problem's tests in the sandbox and says what it came to. stdin/stdout
// tests go through the eval library's CommonOJ (one run per case, SandboxFusion's output rule);
// function-call tests through one program that calls the solution once per case (call-harness.ts for
// TACO's Python, the language's BabelCode harness for a translation).
import { type LanguageName, sandboxLanguageId } from "../../pipeline/code/languages.js";
import { removeMain } from "../../pipeline/code/strip-main.js";
import {
  fillProgram,
  harnessFor,
  judgePrediction,
  type Outcome,
  type Question,
  runCommonOJ,
  styleName,
} from "../../pipeline/eval/index.js";
import {
  type CodeRunner,
  callUnderPolicy,
  type KeptGroup,
  KeptResults,
  resultKey,
  SandboxOutageError,
  type SandboxSettings,
} from "../../pipeline/execution/index.js";
import { pythonCallProgram } from "./call-harness.js";
import type { ProblemTests } from "./taco.js";
import { starterSignature, typedQuestion } from "./typed-question.js";

export const VERDICTS = ["passed", "wrong-answer", "runtime-error", "timeout", "error"] as const;
export type Verdict = (typeof VERDICTS)[number];

export interface Judged {
  verdict: Verdict;
  /** tests run and passed */
  tests: number;
  passed: number;
  /** why it did not pass: the first failing test, the exception, the compile error... */
  detail?: string;
}

export interface JudgeLimits {
  runTimeoutS: number;
  compileTimeoutS: number;
  memoryMb?: number | undefined;
}

/** Tries while the sandbox fails; kept apart from the limits, which are part of a verdict's key. */
export type JudgePolicy = Pick<SandboxSettings, "sandbox_attempts" | "backoff_ms">;

const BY_OUTCOME: Record<Outcome, Verdict> = {
  Passed: "passed",
  "Failed Tests": "wrong-answer",
  "Had Runtime Error": "runtime-error",
  "Timed Out": "timeout",
  "Had Error": "error",
};

/** What a problem's tests look like to a judge: the first `maxTests` cases, and the starter code. */
export interface JudgeTask {
  problemId: string;
  tests: ProblemTests;
  starterCode: string;
}

export function limitTests(tests: ProblemTests, max: number): ProblemTests {
  return {
    ...tests,
    inputs: tests.inputs.slice(0, max),
    outputs: tests.outputs.slice(0, max),
  } as ProblemTests;
}

/** Languages that follow LeetCode's `class Solution` when the Python starter has one. */
const CLASS_STYLE = new Set<LanguageName>([
  "java",
  "cpp",
  "javascript",
  "typescript",
  "csharp",
  "php",
  "ruby",
  "scala",
]);

/** How a translation is called: the entry name in its language's style, and the class, if any. */
export function entryOf(
  task: JudgeTask,
  language: LanguageName,
): { fn: string; cls: string | undefined } | undefined {
  if (task.tests.style !== "call") return undefined;
  const harness = harnessFor(language);
  if (!harness) return undefined;
  const classy =
    harness.requiresClass || (/\bclass\s+Solution\b/.test(task.starterCode) && CLASS_STYLE.has(language));
  return { fn: styleName(task.tests.fnName, harness.naming), cls: classy ? "Solution" : undefined };
}

/**
 * Why a problem's solutions cannot be judged in `language`, or undefined when they can: stdin/stdout
 * problems run in any sandbox language; call-style ones need a harness and a typed starter signature.
 */
export function cannotJudgeIn(task: JudgeTask, language: LanguageName): string | undefined {
  if (!sandboxLanguageId(language)) return `the sandbox cannot run ${language}`;
  if (task.tests.style === "stdio") return undefined;
  if (!harnessFor(language)) return `the eval library has no ${language} harness`;
  const question = typedQuestionOf(task);
  return "error" in question ? question.error : undefined;
}

/** The typed question a call-style problem is judged with in another language, and its translation told. */
export function typedQuestionOf(task: JudgeTask): Question | { error: string } {
  if (task.tests.style !== "call") return { error: "not a function-call problem" };
  const signature = starterSignature(task.starterCode, task.tests.fnName);
  if ("error" in signature) return signature;
  return typedQuestion(task.problemId, task.tests.fnName, signature, task.tests);
}

/**
 * Every run goes through pipeline/execution's outage policy: a sandbox that still fails after its
 * tries throws SandboxOutageError, which is never the solution's fault, not a verdict, and not cached.
 */
async function judgeUncached(
  runner: CodeRunner,
  task: JudgeTask,
  code: string,
  language: LanguageName,
  limits: JudgeLimits,
  policy: JudgePolicy,
  signal: AbortSignal,
): Promise<Judged> {
  const runLimits = {
    runTimeoutS: limits.runTimeoutS,
    compileTimeoutS: limits.compileTimeoutS,
    ...(limits.memoryMb !== undefined ? { memoryMb: limits.memoryMb } : {}),
    signal,
  };
  const { tests } = task;
  if (tests.style === "stdio") {
    const result = await runCommonOJ(
      runner,
      {
        id: task.problemId,
        content: "",
        cases: tests.inputs.map((stdin, i) => ({ stdin, stdout: tests.outputs[i]! })),
      },
      { qid: task.problemId, id: "0", code, language },
      { ...runLimits, outage: policy },
    );
    // left only by a sandbox without the language: not a verdict either, and no retry changes it now
    if (result.sandbox_status === "SandboxError") throw new SandboxOutageError(result.sandbox_message ?? "");
    const failing = Object.entries(result.test_results).find(([, r]) => r !== "PASSED" && r !== "SKIPPED");
    const judged: Judged = {
      verdict: BY_OUTCOME[result.outcome],
      tests: result.num_tests,
      passed: result.num_passed,
    };
    if (failing)
      judged.detail = `test ${failing[0]}: ${result.reason ?? failing[1]}${stderrTail(result.stderr)}`;
    return judged;
  }
  let program: string;
  let ids: string[];
  if (language === "python") {
    ({ program, ids } = pythonCallProgram(code, tests.fnName, tests));
  } else {
    const why = cannotJudgeIn(task, language);
    const question = typedQuestionOf(task);
    if (why !== undefined || "error" in question)
      return { verdict: "error", tests: 0, passed: 0, detail: why };
    const harness = harnessFor(language)!;
    const entry = entryOf(task, language)!;
    program = fillProgram(
      harness,
      harness.generate(question),
      removeMain(code, language).code,
      entry.fn,
      entry.cls,
    );
    ids = question.testCases.map((t) => t.idx);
  }
  const call = await callUnderPolicy(
    runner,
    { code: program, language: sandboxLanguageId(language)! },
    runLimits,
    policy,
  );
  if (call.response.status === "SandboxError") throw new SandboxOutageError(call.response.message ?? "");
  const judgement = judgePrediction(call.response, ids);
  const judged: Judged = {
    verdict: BY_OUTCOME[judgement.outcome],
    tests: ids.length,
    passed: judgement.num_passed,
  };
  if (judged.verdict !== "passed") {
    const failing = Object.entries(judgement.test_results).find(([, r]) => r !== "PASSED");
    const compile = call.response.compile_result?.stderr ?? "";
    judged.detail =
      `${judgement.reason ?? ""}${failing ? `; test ${failing[0]}: ${failing[1]}` : ""}` +
      stderrTail(compile || (call.response.run_result?.stderr ?? ""));
  }
  return judged;
}

function stderrTail(stderr: string | undefined): string {
  const text = (stderr ?? "").trim();
  if (!text) return "";
  return `; stderr: ${text.length > 400 ? `...${text.slice(-400)}` : text}`;
}

// Bumped when the harness or the verdict rules change: older verdicts then count for nothing.
const JUDGE_VERSION = 2;

/** Where a verdict is kept in the cache: everything it depends on. */
export function verdictKey(
  task: JudgeTask,
  code: string,
  language: LanguageName,
  limits: JudgeLimits,
): string {
  return resultKey({
    v: JUDGE_VERSION,
    language,
    code,
    tests: task.tests,
    starter: task.tests.style === "call" && language !== "python" ? task.starterCode : "",
    limits,
  });
}

/** What validation needs of a judge: a verdict per solution, and how many were reused. */
export interface Judge {
  judge(task: JudgeTask, code: string, language: LanguageName): Promise<Judged>;
  readonly computed: number;
  readonly reused: number;
}

/** The verdicts kept in `dir` (one group: a global stage judges each solution once). */
export function keptVerdicts(dir: string): KeptGroup<Judged> {
  return new KeptResults<Judged>(dir).open("");
}

/**
 * Judges solutions through the sandbox, keeping every verdict in the work dir, so that a run that
 * starts over (after Ctrl-C, a kill -9, a failure or --force) judges nothing twice. A verdict asked
 * for again while it is being judged (TACO repeats a problem's tests and solutions under another id)
 * waits for that judgement: one run, one verdict kept, both callers answered.
 */
export class SolutionJudge implements Judge {
  private readonly cache: KeptGroup<Judged>;
  /** judgements under way, by verdict key */
  private readonly judging = new Map<string, Promise<Judged>>();
  /** verdicts computed in this run, and read back from the cache */
  computed = 0;
  reused = 0;

  constructor(
    private readonly runner: CodeRunner,
    verdictsDir: string,
    private readonly limits: JudgeLimits,
    private readonly signal: AbortSignal,
    private readonly policy: JudgePolicy = {},
  ) {
    this.cache = keptVerdicts(verdictsDir);
  }

  async judge(task: JudgeTask, code: string, language: LanguageName): Promise<Judged> {
    const key = verdictKey(task, code, language, this.limits);
    // judged by an earlier process (killed, failed, or a run a forced rerun redoes)
    const known = this.cache.get(key);
    if (known) {
      this.reused++;
      return known;
    }
    const running = this.judging.get(key);
    if (running) {
      const judged = await running;
      if (!this.signal.aborted) this.reused++;
      return judged;
    }
    const judging = judgeUncached(this.runner, task, code, language, this.limits, this.policy, this.signal)
      .then((judged) => {
        if (!this.signal.aborted) {
          this.cache.put(key, judged);
          this.computed++;
        }
        return judged;
      })
      .finally(() => this.judging.delete(key));
    this.judging.set(key, judging);
    return judging;
  }
}
