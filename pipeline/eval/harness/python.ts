// Python harness: the prediction, then one guarded call per test case. Values compare structurally:
// lists also match tuples, floats within the return type's tolerance, bools only bools.
import type { SchemaType } from "../schema-type.js";
import { tolerance } from "../schema-type.js";
import type { Question } from "../types.js";
import {
  CALLEE_PLACEHOLDER,
  CODE_PLACEHOLDER,
  type Harness,
  PRELUDE_PLACEHOLDER,
  testPrefix,
} from "./harness.js";
import { floatText, mapEntries, quote } from "./literals.js";

export function pythonLiteral(value: unknown, type: SchemaType): string {
  switch (type.kind) {
    case "boolean":
      return value ? "True" : "False";
    case "integer":
    case "long":
      return String(value);
    case "float":
    case "double":
      return floatText(value as number);
    case "character":
    case "string":
      return quote(value as string, "js");
    case "list":
      return `[${(value as unknown[]).map((v) => pythonLiteral(v, type.element)).join(", ")}]`;
    case "set": {
      const items = value as unknown[];
      return items.length === 0
        ? "set()"
        : `{${items.map((v) => pythonLiteral(v, type.element)).join(", ")}}`;
    }
    case "map":
      return `{${mapEntries(value, type)
        .map(([k, v]) => `${pythonLiteral(k, type.key)}: ${pythonLiteral(v, type.value)}`)
        .join(", ")}}`;
  }
}

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

export const pythonHarness: Harness = {
  language: "python",
  sandboxId: "python",
  requiresClass: false,
  generate(question: Question): string {
    const tol = tolerance(question.returnType);
    const calls = question.testCases.map((tc) => {
      const args = question.params.map((p) => pythonLiteral(tc.inputs[p.name], p.type)).join(", ");
      const expected = pythonLiteral(tc.outputs, question.returnType);
      return `__bc_check(${quote(testPrefix(tc.idx), "js")}, lambda: ${CALLEE_PLACEHOLDER}(${args}), ${expected}, ${tol})`;
    });
    return `${PRELUDE_PLACEHOLDER}\n${HEADER}\n${CODE_PLACEHOLDER}\n${DRIVER}${calls.join("\n")}\n`;
  },
  prepare(code) {
    // `from __future__` imports must open the file, before the harness's own imports.
    const future = /^from\s+__future__\s+import\s+[^\n]+$/gm;
    return { prelude: (code.match(future) ?? []).join("\n"), body: code.replace(future, "") };
  },
  callee: (fn, cls) => (cls ? `${cls}().${fn}` : fn),
};
