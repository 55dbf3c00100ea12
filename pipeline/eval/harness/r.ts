// R harness with BabelCode's literals: `list(...)` for lists and sets, named lists for maps, `5L`
// for integers. R names are strings, so a map with integer keys cannot be written (BabelCode refuses
// it too), and R integers are 32-bit, so a long outside that range is written as a double.
import type { SchemaType } from "../schema-type.js";
import { tolerance } from "../schema-type.js";
import type { Question } from "../types.js";
import {
  CALLEE_PLACEHOLDER,
  CODE_PLACEHOLDER,
  type Harness,
  testPrefix,
  UnsupportedTypeError,
} from "./harness.js";
import { floatText, mapEntries, quote } from "./literals.js";

const INT32 = 2 ** 31;

export function rLiteral(value: unknown, type: SchemaType): string {
  switch (type.kind) {
    case "boolean":
      return value ? "TRUE" : "FALSE";
    case "integer":
      return `${value}L`;
    case "long": {
      const n = value as number;
      return n >= -INT32 + 1 && n < INT32 ? `${n}L` : floatText(n);
    }
    case "float":
    case "double":
      return floatText(value as number);
    case "character":
    case "string":
      return quote(value as string, "go");
    case "list":
    case "set":
      return `list(${(value as unknown[]).map((v) => rLiteral(v, type.element)).join(", ")})`;
    case "map":
      if (type.key.kind === "integer") {
        throw new UnsupportedTypeError("R list names are strings; a map with integer keys cannot be written");
      }
      return `list(${mapEntries(value, type)
        .map(([k, v]) => `${quote(k as string, "go")} = ${rLiteral(v, type.value)}`)
        .join(", ")})`;
  }
}

/** The schema type as an R list: list(kind = "list", element = list(kind = "integer")). */
function rType(type: SchemaType): string {
  switch (type.kind) {
    case "list":
    case "set":
      return `list(kind = "${type.kind}", element = ${rType(type.element)})`;
    case "map":
      return `list(kind = "map", key = ${rType(type.key)}, value = ${rType(type.value)})`;
    default:
      return `list(kind = "${type.kind}")`;
  }
}

const DRIVER = `
# ---- evaluation harness ----
.bc_equal <- function(actual, expected, t, tol) {
  kind <- t$kind
  if (kind == "list") {
    if (is.null(actual)) actual <- list()
    if (!(is.list(actual) || is.atomic(actual)) || length(actual) != length(expected)) return(FALSE)
    actual <- as.list(actual)
    for (i in seq_along(expected)) {
      if (!.bc_equal(actual[[i]], expected[[i]], t$element, tol)) return(FALSE)
    }
    return(TRUE)
  }
  if (kind == "set") {
    if (is.null(actual)) actual <- list()
    if (length(actual) != length(expected)) return(FALSE)
    return(setequal(as.character(unlist(actual)), as.character(unlist(expected))))
  }
  if (kind == "map") {
    if (is.null(actual)) actual <- list()
    if (length(actual) != length(expected)) return(FALSE)
    if (length(expected) == 0) return(TRUE)
    if (is.null(names(actual)) || !setequal(names(actual), names(expected))) return(FALSE)
    for (key in names(expected)) {
      if (!.bc_equal(actual[[key]], expected[[key]], t$value, tol)) return(FALSE)
    }
    return(TRUE)
  }
  if (length(actual) != 1) return(FALSE)
  if (kind == "float" || kind == "double") return(is.numeric(actual) && abs(actual - expected) <= tol)
  if (kind == "integer" || kind == "long") return(is.numeric(actual) && actual == expected)
  if (kind == "boolean") return(is.logical(actual) && !is.na(actual) && actual == expected)
  is.character(actual) && actual == expected
}

.bc_check <- function(prefix, thunk, expected, t, tol) {
  result <- tryCatch(
    if (isTRUE(.bc_equal(thunk(), expected, t, tol))) "PASSED" else "FAILED",
    error = function(e) class(e)[[1]]
  )
  cat(prefix, result, "\\n", sep = "")
}
`;

export const rHarness: Harness = {
  language: "r",
  sandboxId: "R",
  requiresClass: false,
  generate(question: Question): string {
    const tol = tolerance(question.returnType);
    const calls = question.testCases.map((tc) => {
      const args = question.params.map((p) => rLiteral(tc.inputs[p.name], p.type)).join(", ");
      const expected = rLiteral(tc.outputs, question.returnType);
      return `.bc_check(${quote(testPrefix(tc.idx), "go")}, function() ${CALLEE_PLACEHOLDER}(${args}), ${expected}, .bc_type, ${tol})`;
    });
    return `${CODE_PLACEHOLDER}\n${DRIVER}\n.bc_type <- ${rType(question.returnType)}\n${calls.join("\n")}\n`;
  },
  prepare: (code) => ({ prelude: "", body: code }),
  callee: (fn) => fn,
};
