// Which of the paper's five kinds of mistake a failed run shows: a syntax error, a logical error (the
// code ran but its check failed), a type error, a name error, a time-out; anything else (an index out
// of range, a division by zero) is `other`. Read from what the interpreter or compiler said, in the
// words each toolchain uses.
import type { JournaledRun } from "../dialogue-kit/journal.js";

export const PAPER_ERROR_TYPES = ["syntax", "logical", "type", "name", "timeout"] as const;
export type ErrorType = (typeof PAPER_ERROR_TYPES)[number] | "other";

const NAME =
  /\b(NameError|UnboundLocalError|ReferenceError|NoMethodError|undefined (?:local variable|method|reference|variable|function)|was not declared|undeclared|cannot find symbol|undefined: \w+|cannot find (?:value|function|type)|not found in this scope|is not defined|Undefined variable|Call to undefined function|name '\w+' is not defined)\b/;
const TYPE =
  /\b(TypeError|type mismatch|mismatched types|incompatible types|cannot convert|invalid conversion|invalid operands|cannot use .* as|no match for 'operator|bad operand types?|can only concatenate|unsupported operand|is not a function|Unsupported operand types)\b/;
const SYNTAX =
  /\b(SyntaxError|IndentationError|TabError|syntax error|expected (?:';'|'\)'|'\}'|expression|primary-expression|identifier|`|one of)|unexpected (?:token|end of (?:input|file))|missing (?:\)|;|terminating)|Parse error|unterminated)\b/i;

export function errorTypeOf(run: JournaledRun, checkFailed: boolean): ErrorType {
  if (run.status === "timeout") return "timeout";
  const text = run.errorTail;
  if (checkFailed && /\bAssertionError\b|\bassert(?:ion)?\b.*fail/i.test(text)) return "logical";
  // Python and JavaScript name the exception in the last line; test the likeliest first.
  if (/\b(?:SyntaxError|IndentationError|TabError)\b/.test(text)) return "syntax";
  if (NAME.test(text)) return "name";
  if (TYPE.test(text)) return "type";
  if (run.status === "compile-error" || SYNTAX.test(text)) return "syntax";
  return "other";
}
