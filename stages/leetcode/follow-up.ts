// "Different solutions of the same problem, differing in time or space complexity, or implemented in
// different programming languages." A follow-up dialogue is one problem and a first solution, then
// follow-up questions (FollowUpStep), each answered by a solution that passed the same tests. All is
// decided before any LLM call, from the seed; a translation that fails only drops its own turn.
import type { LanguageName } from "../../pipeline/code/languages.js";
import { seededRandom } from "../../pipeline/random.js";
import type { FollowUpKind, LeetcodeConfig } from "./config.js";
import type { ValidatedProblem, ValidatedSolution } from "./validate-solutions.js";

/**
 * One follow-up question and what answers it:
 *   complexity   TACO names an expected time / auxiliary space complexity: the user asks for it, and
 *                another passing solution answers (the one with the shallowest loop nesting; the
 *                deepest comes first, so the answer is the likelier improvement; a heuristic, since
 *                TACO does not say which of its solutions meets the bound);
 *   alternative  no expected complexity: the user asks for another approach, same choice of pair;
 *   language     the user asks for another language: the strong model translates the latest answer,
 *                and the translation is kept only if it passes the tests in the sandbox.
 */
export type FollowUpStep =
  | { kind: "complexity" | "alternative"; question: string; solution: ValidatedSolution }
  | { kind: "language"; question: string; language: LanguageName };

export interface FollowUpPlan {
  problem: ValidatedProblem;
  first: ValidatedSolution;
  steps: FollowUpStep[];
}

const DISPLAY: Partial<Record<LanguageName, string>> = {
  java: "Java",
  cpp: "C++",
  c: "C",
  javascript: "JavaScript",
  typescript: "TypeScript",
  csharp: "C#",
  go: "Go",
  rust: "Rust",
  php: "PHP",
  ruby: "Ruby",
  scala: "Scala",
  lua: "Lua",
  perl: "Perl",
  r: "R",
  python: "Python",
};

export function languageDisplayName(language: LanguageName): string {
  return DISPLAY[language] ?? language;
}

/**
 * Deepest nesting of loops in a Python program, comprehensions counted: a rough stand-in for its
 * time complexity, enough to put a brute force before a better solution.
 */
export function loopDepth(code: string): number {
  const open: number[] = [];
  let deepest = 0;
  for (const line of code.split("\n")) {
    const body = line.replace(/#.*$/, "");
    if (body.trim() === "") continue;
    const indent = body.length - body.trimStart().length;
    while (open.length > 0 && open[open.length - 1]! >= indent) open.pop();
    const header = /^\s*(?:async\s+)?(?:for|while)\b/.test(body);
    const inline =
      (body.match(/\bfor\b/g) ?? []).length - (header && /^\s*(?:async\s+)?for\b/.test(body) ? 1 : 0);
    deepest = Math.max(deepest, open.length + (header ? 1 : 0) + inline);
    if (header) open.push(indent);
  }
  return deepest;
}

const ASK: Record<"complexity-time" | "complexity-space" | "complexity-both" | "alternative", string[]> = {
  "complexity-time": [
    "Can you solve it in {time} time?",
    "Could you improve the solution so that it runs in {time} time?",
    "Follow-up: is there a solution with {time} time complexity?",
  ],
  "complexity-space": [
    "Can you solve it using only {space} extra space?",
    "Could you reduce the auxiliary space to {space}?",
  ],
  "complexity-both": [
    "Can you solve it in {time} time and {space} auxiliary space?",
    "Follow-up: could you write a solution that runs in {time} time using {space} extra space?",
  ],
  alternative: [
    "Could you solve it with a different approach?",
    "Is there another way to solve this problem? Please show me.",
    "Can you write a different solution to the same problem?",
  ],
};

const ASK_LANGUAGE = [
  "Could you write the solution in {language}?",
  "Can you implement the same solution in {language}?",
  "Please translate your solution into {language}.",
];

function pick<T>(items: readonly T[], random: () => number): T {
  return items[Math.floor(random() * items.length)]!;
}

function complexityQuestion(problem: ValidatedProblem, random: () => number): string {
  const { expectedTime: time, expectedSpace: space } = problem.problem;
  const key = time && space ? "complexity-both" : time ? "complexity-time" : "complexity-space";
  return pick(ASK[key], random)
    .replace("{time}", () => time ?? "")
    .replace("{space}", () => space ?? "");
}

/**
 * The follow-up plan of one problem, or undefined when it allows no follow-up. `languagesFor` gives
 * the configured languages its solutions can be judged in.
 */
export function planFollowUp(
  problem: ValidatedProblem,
  config: LeetcodeConfig["follow_up"],
  languages: readonly LanguageName[],
  seed: number,
): FollowUpPlan | undefined {
  const random = seededRandom(seed);
  const byDepth = [...problem.passing].sort(
    (a, b) => loopDepth(b.code) - loopDepth(a.code) || a.index - b.index,
  );
  let first = byDepth[0]!;
  const steps: FollowUpStep[] = [];
  const room = () => steps.length < config.max_turns - 1;
  const hasComplexity =
    problem.problem.expectedTime !== undefined || problem.problem.expectedSpace !== undefined;
  const kinds = new Set<FollowUpKind>(config.kinds);
  if (byDepth.length >= 2 && room()) {
    const second = byDepth[byDepth.length - 1]!;
    if (hasComplexity && kinds.has("complexity"))
      steps.push({ kind: "complexity", question: complexityQuestion(problem, random), solution: second });
    else if (!hasComplexity && kinds.has("alternative"))
      steps.push({ kind: "alternative", question: pick(ASK.alternative, random), solution: second });
  }
  if (steps.length === 0) first = problem.passing[0]!;
  if (kinds.has("language")) {
    const pool = [...languages];
    for (let n = 0; n < config.languages_per_dialogue && pool.length > 0 && room(); n++) {
      const language = pool.splice(Math.floor(random() * pool.length), 1)[0]!;
      steps.push({
        kind: "language",
        question: pick(ASK_LANGUAGE, random).replace("{language}", () => languageDisplayName(language)),
        language,
      });
    }
  }
  return steps.length === 0 ? undefined : { problem, first, steps };
}
