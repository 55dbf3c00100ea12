// What a language's harness generator provides. A harness turns a question into one program per
// language that calls the prediction once per test case and prints `TEST-{idx}...{RESULT}`; the
// prediction itself is only known at evaluation time, so the program keeps placeholders for it.
import type { LanguageName } from "../../code/languages.js";
import { type SchemaType, tolerance } from "../schema-type.js";
import type { Question } from "../types.js";
import type { NamingConvention } from "./naming.js";

/** Where the prediction's code goes. */
export const CODE_PLACEHOLDER = "PLACEHOLDER_CODE_BODY";
/** Where the expression naming the function to call goes (`f`, `new Solution().f`, `Solution::f`...). */
export const CALLEE_PLACEHOLDER = "PLACEHOLDER_CALLEE";
/** Where lines hoisted out of the prediction go (Rust inner attributes and `use`s, for example). */
export const PRELUDE_PLACEHOLDER = "PLACEHOLDER_PRELUDE";

/** The language cannot express a type or value of the question; the question is listed as not generated. */
export class UnsupportedTypeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UnsupportedTypeError";
  }
}

/** The prediction's code split for insertion: `prelude` goes to the top of the program, `body` at the placeholder. */
export interface PreparedCode {
  prelude: string;
  body: string;
}

export interface Harness {
  language: LanguageName;
  /** SandboxFusion language id the program runs under. */
  sandboxId: string;
  /** Java and C# call a method of a class; the class defaults to `Solution` there. */
  requiresClass: boolean;
  /** How BabelCode spells the question's entry function in this language (`is_palindrome`, `IsPalindrome`). */
  naming: NamingConvention;
  /** The test program for a question, with placeholders; throws UnsupportedTypeError if it cannot. */
  generate(question: Question): string;
  /** Makes a prediction fit the program (drops `package main`, `<?php`, repeated imports...). */
  prepare(code: string): PreparedCode;
  /** The callee expression for a function name, an optional class name, and the prepared code. */
  callee(fn: string, cls: string | undefined, code: string): string;
}

/** Renders a test value of a type as a literal of the target language. */
export type LiteralRenderer = (value: unknown, type: SchemaType) => string;

/** The `TEST-{idx}...` prefix every harness prints before a result. */
export function testPrefix(idx: string): string {
  return `TEST-${idx}...`;
}

/** One test case with its arguments (in parameter order) and expected value written as literals. */
export interface RenderedCase {
  idx: string;
  /** `TEST-{idx}...`, unquoted */
  prefix: string;
  args: string[];
  expected: string;
}

/** Every test case of a question written with `render`; the loop each harness's driver is built from. */
export function renderCases(question: Question, render: LiteralRenderer): RenderedCase[] {
  return question.testCases.map((tc) => ({
    idx: tc.idx,
    prefix: testPrefix(tc.idx),
    args: question.params.map((p) => render(tc.inputs[p.name], p.type)),
    expected: render(tc.outputs, question.returnType),
  }));
}

/** A test case as the driver checks it: its literals, and the call of the entry point on its arguments. */
export interface CheckedCase extends RenderedCase {
  /** `CALLEE(arg, ...)`, the callee still a placeholder */
  call: string;
}

/**
 * The driver's line for each test case, `line(tc, tol)`: the case with its call written, and the
 * tolerance results of the return type compare with.
 */
export function renderChecks(
  question: Question,
  render: LiteralRenderer,
  line: (tc: CheckedCase, tol: number) => string,
): string[] {
  const tol = tolerance(question.returnType);
  return renderCases(question, render).map((tc) =>
    line({ ...tc, call: `${CALLEE_PLACEHOLDER}(${tc.args.join(", ")})` }, tol),
  );
}
