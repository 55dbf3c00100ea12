// Python harness: the prediction, then one guarded call per test case. Values compare structurally:
// lists also match tuples, floats within the return type's tolerance, bools only bools.
import { CODE_PLACEHOLDER, defineHarness, PRELUDE_PLACEHOLDER } from "./harness.js";
import { literals, quote } from "./literals.js";

export const pythonLiteral = literals({
  boolean: (b) => (b ? "True" : "False"),
  string: (s) => quote(s, "js"),
  set: (items) => (items.length === 0 ? "set()" : `{${items.join(", ")}}`),
  map: (entries) => `{${entries.map(([k, v]) => `${k}: ${v}`).join(", ")}}`,
});

// The names a BabelCode Python prediction may use without importing them.
const HEADER = `import collections
import functools
import heapq
import itertools
import math
import re
import string
import sys
from typing import *
from collections import Counter, OrderedDict, defaultdict, deque
from functools import lru_cache, reduce

sys.setrecursionlimit(100000)
`;

const DRIVER = `
# ---- evaluation harness ----
def __bc_equal(actual, expected, tol):
    if isinstance(expected, bool):
        return type(actual).__name__ in ("bool", "bool_") and bool(actual) == expected
    if isinstance(expected, float):
        if isinstance(actual, (bool, str)):
            return False
        try:
            return abs(float(actual) - expected) <= tol
        except (TypeError, ValueError):
            return False
    if isinstance(expected, int):
        return not isinstance(actual, (bool, str)) and actual == expected
    if isinstance(expected, str):
        return isinstance(actual, str) and actual == expected
    if isinstance(expected, list):
        return (
            isinstance(actual, (list, tuple))
            and len(actual) == len(expected)
            and all(__bc_equal(a, e, tol) for a, e in zip(actual, expected))
        )
    if isinstance(expected, set):
        return isinstance(actual, (set, frozenset)) and actual == expected
    if isinstance(expected, dict):
        return (
            isinstance(actual, dict)
            and set(actual.keys()) == set(expected.keys())
            and all(__bc_equal(actual[k], v, tol) for k, v in expected.items())
        )
    return actual == expected


def __bc_check(prefix, thunk, expected, tol):
    try:
        result = "PASSED" if __bc_equal(thunk(), expected, tol) else "FAILED"
    except BaseException as exc:  # SystemExit and RecursionError are the prediction's failures too
        result = type(exc).__name__
    print(prefix + result, flush=True)

`;

export const pythonHarness = defineHarness({
  language: "python",
  naming: "snake",
  literal: pythonLiteral,
  check: (tc, tol) => `__bc_check(${quote(tc.prefix, "js")}, lambda: ${tc.call}, ${tc.expected}, ${tol})`,
  program: (checks) =>
    `${PRELUDE_PLACEHOLDER}\n${HEADER}\n${CODE_PLACEHOLDER}\n${DRIVER}${checks.join("\n")}\n`,
  prepare(code) {
    // `from __future__` imports must open the file, before the harness's own imports.
    // The parenthesised form may span lines: `from __future__ import (annotations,\n    division)`.
    const future = /^from\s+__future__\s+import\s+(?:\([^)]*\)|[^\n]+)[ \t]*$/gm;
    return { prelude: (code.match(future) ?? []).join("\n"), body: code.replace(future, "") };
  },
  callee: (fn, cls) => (cls ? `${cls}().${fn}` : fn),
});
