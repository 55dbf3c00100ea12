// Step 3 of BabelCode: from questions to one test program per question and language. A question
// that is malformed, or whose types a language cannot express, is listed with the reason.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { type LanguageName, languageFromSandboxId } from "../code/languages.js";
import { languageIds } from "../sandbox/index.js";
import { harnessFor, harnessLanguages, NO_HARNESS, UnsupportedTypeError } from "./harness/index.js";
import { styleName } from "./harness/naming.js";
import { type JsonLine, readJsonl, writeJson, writeJsonl } from "./jsonl.js";
import { parseQuestion, questionIdOf } from "./question.js";
import { SchemaError } from "./schema-type.js";
import { EvalInputError, type GeneratedTest, type GenerationFailure, type Question } from "./types.js";

export interface GenerationResult {
  questions: Question[];
  tests: GeneratedTest[];
  failures: GenerationFailure[];
}

/** Language name written in a failure that applies to every language (a malformed question). */
export const ALL_LANGUAGES = "*";

/** Every language the sandbox runs, by our name (javascript for nodejs, r for R, shell for bash). */
export function sandboxLanguages(): LanguageName[] {
  return languageIds().flatMap((id) => languageFromSandboxId(id) ?? []);
}

/** Test programs for every question in every language asked for (default: every language the sandbox runs). */
export function generateTests(
  rawQuestions: readonly JsonLine[],
  languages: readonly (LanguageName | string)[] = sandboxLanguages(),
  source = "questions",
): GenerationResult {
  const result: GenerationResult = { questions: [], tests: [], failures: [] };
  const seen = new Map<string, number>();
  for (const { value, line } of rawQuestions) {
    const qid = questionIdOf(value) ?? `line ${line}`;
    const earlier = seen.get(qid);
    if (earlier !== undefined) {
      throw new EvalInputError(
        `${source}:${line}: question_id ${qid} was already used on line ${earlier}; give every question its own id.`,
      );
    }
    seen.set(qid, line);
    let question: Question;
    try {
      question = parseQuestion(value);
    } catch (error) {
      if (!(error instanceof SchemaError)) throw error;
      result.failures.push({ qid, language: ALL_LANGUAGES, reason: `line ${line}: ${error.message}` });
      continue;
    }
    result.questions.push(question);
    for (const language of languages) {
      const harness = harnessFor(language as LanguageName);
      if (!harness) {
        const why = NO_HARNESS[language as LanguageName];
        result.failures.push({
          qid,
          language,
          reason: why
            ? why
            : `no harness generator for ${language}; generators exist for ${harnessLanguages().join(", ")}`,
        });
        continue;
      }
      try {
        const test: GeneratedTest = {
          qid,
          title: question.title,
          language: harness.language,
          sandbox_language: harness.sandboxId,
          test_case_ids: question.testCases.map((tc) => tc.idx),
          test_code: harness.generate(question),
        };
        // BabelCode's name for the entry function in this language's style (is_palindrome, IsPalindrome).
        if (question.entryFnName) test.entry_fn_name = styleName(question.entryFnName, harness.naming);
        // Only class-based languages call through a class; elsewhere a prediction opts in by naming one.
        if (harness.requiresClass) test.entry_cls_name = question.entryClsName ?? "Solution";
        result.tests.push(test);
      } catch (error) {
        if (!(error instanceof UnsupportedTypeError)) throw error;
        result.failures.push({ qid, language, reason: error.message });
      }
    }
  }
  return result;
}

const FAILURES_FILE = "failures.jsonl";
const SUMMARY_FILE = "summary.json";

/** Reads questions JSONL and writes `<language>.jsonl` per language, failures.jsonl and summary.json. */
export async function generateTestDir(
  questionsPath: string,
  outDir: string,
  languages?: readonly string[],
): Promise<GenerationResult> {
  const result = generateTests(await readJsonl(questionsPath), languages, questionsPath);
  const byLanguage = new Map<string, GeneratedTest[]>();
  for (const test of result.tests) {
    const list = byLanguage.get(test.language) ?? [];
    list.push(test);
    byLanguage.set(test.language, list);
  }
  for (const [language, tests] of byLanguage) writeJsonl(join(outDir, `${language}.jsonl`), tests);
  writeJsonl(join(outDir, FAILURES_FILE), result.failures);
  writeJson(join(outDir, SUMMARY_FILE), {
    questions_file: questionsPath,
    questions: result.questions.length,
    malformed_questions: result.failures.filter((f) => f.language === ALL_LANGUAGES).length,
    generated: Object.fromEntries([...byLanguage].map(([language, tests]) => [language, tests.length])),
    failures: result.failures.length,
  });
  return result;
}

/** Every generated test in a directory written by generateTestDir, keyed by language then qid. */
export async function readTestDir(dir: string): Promise<Map<string, Map<string, GeneratedTest>>> {
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith(".jsonl") && f !== FAILURES_FILE);
  } catch (error) {
    throw new EvalInputError(
      `cannot read test directory ${dir}: ${(error as Error).message}. Create it with \`pnpm pipeline eval generate\`.`,
    );
  }
  if (files.length === 0) {
    throw new EvalInputError(
      `${dir} holds no generated tests; create them with \`pnpm pipeline eval generate\`.`,
    );
  }
  const index = new Map<string, Map<string, GeneratedTest>>();
  for (const file of files.sort()) {
    for (const { value } of await readJsonl(join(dir, file))) {
      const test = value as GeneratedTest;
      const byQid = index.get(test.language) ?? new Map<string, GeneratedTest>();
      byQid.set(test.qid, test);
      index.set(test.language, byQid);
    }
  }
  return index;
}
