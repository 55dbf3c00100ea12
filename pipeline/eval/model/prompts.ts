// The paper's evaluation prompts (seed 003, "Model Evaluation Prompts" and the two "Prompt for GPT
// models mimicking human feedback" blocks), kept verbatim in prompts/eval-*.md. Their placeholders
// have spaces in them (`{original prompt}`), so they are filled here, in one pass, by name. The two
// renderings that are decisions (the fence, the canonical section) are in docs/eval.md.
import { loadPrompt } from "../../llm/prompts.js";
import type { BenchmarkName, FeedbackKind } from "./config.js";

export const PROMPT_NAMES = {
  humaneval: "eval-humaneval",
  mbpp: "eval-mbpp",
  oracle: "eval-feedback-oracle",
  human: "eval-feedback-human",
} as const;

/**
 * The seed's rendering of a Markdown fence (a triple backtick after the web page's smart quotes).
 * With `fence: backticks` (the default) the model is sent ```, the fence the answer is read with.
 */
export const SEED_FENCE = "\u201c\u2018";

const PLACEHOLDER = /\{(language|original prompt|sanitized code|execution result|canonical solution)\}/g;

type Values = Partial<
  Record<
    "language" | "original prompt" | "sanitized code" | "execution result" | "canonical solution",
    string
  >
>;

/** Fills the named placeholders in one pass: a value that itself holds `{language}` stays as it is. */
export function fillPlaceholders(template: string, values: Values): string {
  return template.replace(PLACEHOLDER, (whole, name: keyof Values) => values[name] ?? whole);
}

function fenced(text: string, fence: "backticks" | "verbatim"): string {
  return fence === "backticks" ? text.replaceAll(SEED_FENCE, "```") : text;
}

/** The first-round prompt for a task of `benchmark` (HumanEval and MBPP prompts serve their "+" too). */
export function taskPrompt(
  benchmark: BenchmarkName,
  originalPrompt: string,
  fence: "backticks" | "verbatim" = "backticks",
): string {
  const name = benchmark.startsWith("humaneval") ? PROMPT_NAMES.humaneval : PROMPT_NAMES.mbpp;
  return fillPlaceholders(fenced(loadPrompt(name).text, fence), {
    language: "python",
    "original prompt": originalPrompt.replace(/\s+$/, ""),
  });
}

/**
 * The section of the no-canonical prompt that the seed kept by mistake: cut when rendering, so
 * `human` guidance never sees the solution; the file itself stays as the seed has it.
 */
const CANONICAL_SECTION = /@@Canonical Solution[ \t]*\n\{canonical solution\}[ \t]*\n\n(?=@@Guidance)/;

/** The prompt that asks the feedback role for human-like guidance on a failed attempt. */
export function guidancePrompt(
  kind: Exclude<FeedbackKind, "execution">,
  values: { originalPrompt: string; code: string; executionResult: string; canonical: string },
): string {
  let template = loadPrompt(kind === "oracle" ? PROMPT_NAMES.oracle : PROMPT_NAMES.human).text;
  if (kind === "human") {
    const cut = template.replace(CANONICAL_SECTION, "");
    if (cut === template) {
      throw new Error(
        `prompts/${PROMPT_NAMES.human}.md no longer has the seed's "@@Canonical Solution" section before "@@Guidance"; update CANONICAL_SECTION in pipeline/eval/model/prompts.ts`,
      );
    }
    template = cut;
  }
  return fillPlaceholders(template, {
    "original prompt": values.originalPrompt.replace(/\s+$/, ""),
    "sanitized code": values.code.replace(/\s+$/, ""),
    "execution result": values.executionResult.replace(/\s+$/, ""),
    ...(kind === "oracle" ? { "canonical solution": values.canonical.replace(/\s+$/, "") } : {}),
  });
}

/** The texts of the four prompts, for run.json's fingerprint: a changed prompt is a different evaluation. */
export function promptTexts(): string[] {
  return Object.values(PROMPT_NAMES).map((name) => loadPrompt(name).text);
}
