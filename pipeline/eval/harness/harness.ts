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

/** One test case as the driver checks it, its values written as literals. */
export interface CheckedCase {
  /** `TEST-{idx}...`, unquoted */
  prefix: string;
  /** the arguments, in parameter order */
  args: string[];
  expected: string;
  /** `CALLEE(arg, ...)`, the callee still a placeholder */
  call: string;
}

/** A harness as its language writes it; what is left out takes the defaults of `defineHarness`. */
export interface HarnessSpec
  extends Pick<Harness, "language" | "naming">,
    Partial<Pick<Harness, "sandboxId" | "requiresClass" | "prepare" | "callee">> {
  literal: LiteralRenderer;
  /** The driver's statement for one test case; `tol` is what results of the return type compare with. */
  check(tc: CheckedCase, tol: number, question: Question): string;
  /** The whole program around the checks. */
  program(checks: string[], question: Question): string;
}

/**
 * The harness of a spec: it runs under the sandbox id of the language's name, calls a plain
 * function, and takes the prediction as it is, unless the spec says otherwise.
 */
export function defineHarness({ literal, check, program, ...spec }: HarnessSpec): Harness {
  return {
    sandboxId: spec.language,
    requiresClass: false,
    prepare: (code) => ({ prelude: "", body: code }),
    callee: (fn) => fn,
    ...spec,
    generate(question) {
      const tol = tolerance(question.returnType);
      const checks = question.testCases.map((tc) => {
        const args = question.params.map((p) => literal(tc.inputs[p.name], p.type));
        const expected = literal(tc.outputs, question.returnType);
        const call = `${CALLEE_PLACEHOLDER}(${args.join(", ")})`;
        return check({ prefix: `TEST-${tc.idx}...`, args, expected, call }, tol, question);
      });
      return program(checks, question);
    },
  };
}
