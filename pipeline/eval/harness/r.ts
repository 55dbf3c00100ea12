// R harness with BabelCode's literals: `list(...)` for lists and sets, named lists for maps, `5L`
// for integers. R names are strings, so a map with integer keys cannot be written (BabelCode refuses
// it too), and R integers are 32-bit, so a long outside that range is written as a double.
import { CODE_PLACEHOLDER, defineHarness, UnsupportedTypeError } from "./harness.js";
import { floatText, literals, quote, typeRecord } from "./literals.js";

const INT32 = 2 ** 31;

export const rLiteral = literals({
  boolean: (b) => (b ? "TRUE" : "FALSE"),
  integer: (n) => `${n}L`,
  long: (n) => (n >= -INT32 + 1 && n < INT32 ? `${n}L` : floatText(n)),
  string: (s) => quote(s, "go"),
  list: (items) => `list(${items.join(", ")})`,
  set: (items) => `list(${items.join(", ")})`,
  map(entries, type) {
    if (type.key.kind === "integer") {
      throw new UnsupportedTypeError("R list names are strings; a map with integer keys cannot be written");
    }
    return `list(${entries.map(([k, v]) => `${k} = ${v}`).join(", ")})`;
  },
});

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

export const rHarness = defineHarness({
  language: "r",
  sandboxId: "R",
  naming: "snake",
  literal: rLiteral,
  check: (tc, tol) =>
    `.bc_check(${quote(tc.prefix, "go")}, function() ${tc.call}, ${tc.expected}, .bc_type, ${tol})`,
  program(checks, question) {
    const type = typeRecord(
      question.returnType,
      (fields) => `list(${fields.map(([k, v]) => `${k} = ${v}`).join(", ")})`,
      (kind) => `"${kind}"`,
    );
    return `${CODE_PLACEHOLDER}\n${DRIVER}\n.bc_type <- ${type}\n${checks.join("\n")}\n`;
  },
});
