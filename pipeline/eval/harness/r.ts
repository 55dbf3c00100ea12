// R harness with BabelCode's literals: `list(...)` for lists and sets, named lists for maps, `5L`
// for integers. R names are strings, so a map with integer keys cannot be written (BabelCode refuses
// it too), and R integers are 32-bit, so a long outside that range is written as a double.
import type { SchemaType } from "../schema-type.js";
import type { Question } from "../types.js";
import { CODE_PLACEHOLDER, type Harness, renderChecks, UnsupportedTypeError } from "./harness.js";
import { floatText, type LiteralDialect, quote, renderLiteral } from "./literals.js";

const INT32 = 2 ** 31;

const R_LITERALS: LiteralDialect = {
  boolean: (b) => (b ? "TRUE" : "FALSE"),
  integer: (n) => `${n}L`,
  long: (n) => (n >= -INT32 + 1 && n < INT32 ? `${n}L` : floatText(n)),
  float: floatText,
  double: floatText,
  character: (c) => quote(c, "go"),
  string: (s) => quote(s, "go"),
  list: (items) => `list(${items.join(", ")})`,
  set: (items) => `list(${items.join(", ")})`,
  map(entries, type) {
    if (type.key.kind === "integer") {
      throw new UnsupportedTypeError("R list names are strings; a map with integer keys cannot be written");
    }
    return `list(${entries.map(([k, v]) => `${k} = ${v}`).join(", ")})`;
  },
};

export const rLiteral = (value: unknown, type: SchemaType): string => renderLiteral(value, type, R_LITERALS);

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
  naming: "snake",
  generate(question: Question): string {
    const calls = renderChecks(
      question,
      rLiteral,
      (tc, tol) =>
        `.bc_check(${quote(tc.prefix, "go")}, function() ${tc.call}, ${tc.expected}, .bc_type, ${tol})`,
    );
    return `${CODE_PLACEHOLDER}\n${DRIVER}\n.bc_type <- ${rType(question.returnType)}\n${calls.join("\n")}\n`;
  },
  prepare: (code) => ({ prelude: "", body: code }),
  callee: (fn) => fn,
};
