// The harness generators by language, and the step that puts a prediction into a generated program.
import type { LanguageName } from "../../code/languages.js";
import { cHarness } from "./c.js";
import { cppHarness } from "./cpp.js";
import { csharpHarness } from "./csharp.js";
import { goHarness } from "./go.js";
import { CALLEE_PLACEHOLDER, CODE_PLACEHOLDER, type Harness, PRELUDE_PLACEHOLDER } from "./harness.js";
import { javaHarness } from "./java.js";
import { javascriptHarness, typescriptHarness } from "./javascript.js";
import { luaHarness } from "./lua.js";
import { perlHarness } from "./perl.js";
import { phpHarness } from "./php.js";
import { pythonHarness } from "./python.js";
import { rHarness } from "./r.js";
import { rubyHarness } from "./ruby.js";
import { rustHarness } from "./rust.js";
import { scalaHarness } from "./scala.js";

export { type Harness, UnsupportedTypeError } from "./harness.js";

export const HARNESSES: readonly Harness[] = [
  pythonHarness,
  javascriptHarness,
  typescriptHarness,
  cppHarness,
  javaHarness,
  goHarness,
  rustHarness,
  csharpHarness,
  phpHarness,
  rubyHarness,
  luaHarness,
  rHarness,
  scalaHarness,
  perlHarness,
  cHarness,
];

/**
 * Languages the sandbox runs that no test program can be written in, and why; every question is a
 * generation failure there, with this reason.
 */
export const NO_HARNESS: Partial<Record<LanguageName, string>> = {
  shell: "a bash function can neither take nor return typed values (only strings and an exit status)",
  sql: "SQL has no functions a test can call with arguments and compare the result of",
};

const BY_LANGUAGE = new Map<LanguageName, Harness>(HARNESSES.map((h) => [h.language, h]));

export function harnessFor(language: LanguageName): Harness | undefined {
  return BY_LANGUAGE.get(language);
}

export function harnessLanguages(): LanguageName[] {
  return HARNESSES.map((h) => h.language);
}

/**
 * The runnable program: the prediction's code at the code placeholder (hoisted lines at the
 * prelude), and the callee at every call. Replacement is by function so `$&` in code stays literal.
 */
export function fillProgram(
  harness: Harness,
  testCode: string,
  code: string,
  fn: string,
  cls?: string,
): string {
  const prepared = harness.prepare(code);
  const callee = harness.callee(fn, cls, prepared.body);
  let program = testCode;
  let body = prepared.body;
  if (program.includes(PRELUDE_PLACEHOLDER)) {
    program = program.replace(PRELUDE_PLACEHOLDER, () => prepared.prelude);
  } else if (prepared.prelude) {
    body = `${prepared.prelude}\n${body}`;
  }
  program = program.split(CALLEE_PLACEHOLDER).join(callee);
  return program.replace(CODE_PLACEHOLDER, () => body);
}
