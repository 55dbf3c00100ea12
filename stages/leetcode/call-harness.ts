// TACO's function-call tests, for its Python solutions: `fn_name` is called once per case on a fresh
// `Solution()` (LeetCode's starter) or as a module-level function. TACO's values are untyped JSON, so
// the comparison is APPS's rule, which TACO's tests were written for: tuples read as lists, and an
// expected value wrapped in a one-element list also accepts the bare value. Each case prints the
// eval library's `TEST-{i}...PASSED|FAILED|<exception>` line, judged by `judgePrediction`.
import { harnessFor } from "../../pipeline/eval/index.js";

// The names LeetCode's Python environment provides without an import (`List`, `Optional`, `deque`...).
const HEADER = `import bisect
import collections
import functools
import heapq
import itertools
import math
import operator
import re
import string
import sys
from typing import *
from collections import Counter, OrderedDict, defaultdict, deque
from functools import cache, lru_cache, reduce
from heapq import heapify, heappop, heappush
from itertools import accumulate, combinations, permutations, product
from math import inf

sys.setrecursionlimit(100000)
`;

const DRIVER = `
# ---- leetcode call harness ----
import json as __lc_json


def __lc_plain(value):
    if isinstance(value, (list, tuple)):
        return [__lc_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: __lc_plain(v) for k, v in value.items()}
    return value


def __lc_same(actual, expected):
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(actual) is type(expected) and actual == expected
    if isinstance(expected, float) or isinstance(actual, float):
        try:
            return abs(float(actual) - float(expected)) <= 1e-6 * max(1.0, abs(float(expected)))
        except (TypeError, ValueError):
            return False
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(actual) == len(expected)
            and all(__lc_same(a, e) for a, e in zip(actual, expected))
        )
    return actual == expected


def __lc_equal(actual, expected):
    actual = __lc_plain(actual)
    if __lc_same(actual, expected):
        return True
    return isinstance(expected, list) and len(expected) == 1 and __lc_same(actual, expected[0])


__lc_tests = __lc_json.loads(PLACEHOLDER_TESTS)
for __lc_i, (__lc_args, __lc_want) in enumerate(zip(__lc_tests["inputs"], __lc_tests["outputs"])):
    try:
        __lc_got = PLACEHOLDER_CALLEE(*__lc_args)
        __lc_result = "PASSED" if __lc_equal(__lc_got, __lc_want) else "FAILED"
    except BaseException as __lc_exc:  # SystemExit and RecursionError are the solution's failures too
        __lc_result = type(__lc_exc).__name__
    print("TEST-%d...%s" % (__lc_i, __lc_result), flush=True)
`;

/** Whether a program defines LeetCode's `class Solution` at top level. */
export function definesSolutionClass(code: string): boolean {
  return /^class\s+Solution\b/m.test(code);
}

/**
 * The program that runs a Python solution on call-style tests, and the test ids it prints. The code
 * goes in unchanged (only `from __future__` lines move to the top, where Python wants them).
 */
export function pythonCallProgram(
  code: string,
  fnName: string,
  tests: { inputs: unknown[][]; outputs: unknown[] },
): { program: string; ids: string[] } {
  const prepared = harnessFor("python")!.prepare(code);
  const callee = definesSolutionClass(code) ? `Solution().${fnName}` : fnName;
  // A JSON string literal is a valid Python string literal, so the tests need no other escaping.
  const data = JSON.stringify(JSON.stringify({ inputs: tests.inputs, outputs: tests.outputs }));
  // one pass: a test value that reads like a placeholder is data, never filled in turn
  const slots: Record<string, string> = { PLACEHOLDER_TESTS: data, PLACEHOLDER_CALLEE: callee };
  const driver = DRIVER.replace(/PLACEHOLDER_(?:TESTS|CALLEE)/g, (slot) => slots[slot]!);
  const program = `${prepared.prelude}\n${HEADER}\n${prepared.body}\n${driver}`;
  return { program, ids: tests.inputs.map((_, i) => String(i)) };
}
