// HumanEval-style programs for the sandbox benchmark: one function and its tests per language, the way
// the evaluator runs model answers (compile where the language compiles, then run the asserts).

export interface BenchProgram {
  language: string;
  code: string;
}

export const PYTHON_HELLO: BenchProgram = { language: "python", code: 'print("hello, world")' };

export const HUMANEVAL_PROGRAMS: BenchProgram[] = [
  {
    language: "python",
    code: `from typing import List

def has_close_elements(numbers: List[float], threshold: float) -> bool:
    for i, a in enumerate(numbers):
        for j, b in enumerate(numbers):
            if i != j and abs(a - b) < threshold:
                return True
    return False

assert has_close_elements([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3)
assert not has_close_elements([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.05)
assert has_close_elements([1.0, 2.0, 5.9, 4.0, 5.0], 0.95)
assert not has_close_elements([1.0, 2.0, 5.9, 4.0, 5.0], 0.8)
print("TEST-0...PASSED")
`,
  },
  {
    language: "nodejs",
    code: `const assert = require("node:assert");
function separateParenGroups(s) {
  const out = []; let depth = 0; let cur = "";
  for (const c of s.replaceAll(" ", "")) {
    if (c === "(") depth++;
    if (c === ")") depth--;
    cur += c;
    if (depth === 0 && cur) { out.push(cur); cur = ""; }
  }
  return out;
}
assert.deepStrictEqual(separateParenGroups("(()()) ((())) () ((())()())"), ["(()())", "((()))", "()", "((())()())"]);
assert.deepStrictEqual(separateParenGroups("( ) (( )) (( )( ))"), ["()", "(())", "(()())"]);
console.log("TEST-0...PASSED");
`,
  },
  {
    language: "typescript",
    code: `import { strict as assert } from "node:assert";
function belowZero(operations: number[]): boolean {
  let balance = 0;
  for (const op of operations) {
    balance += op;
    if (balance < 0) return true;
  }
  return false;
}
assert.equal(belowZero([]), false);
assert.equal(belowZero([1, 2, -3, 1, 2, -3]), false);
assert.equal(belowZero([1, 2, -4, 5, 6]), true);
console.log("TEST-0...PASSED");
`,
  },
  {
    language: "cpp",
    code: `#include <cassert>
#include <cmath>
#include <cstdio>
#include <vector>
using namespace std;
float mean_absolute_deviation(vector<float> numbers) {
  float sum = 0; for (float x : numbers) sum += x;
  float mean = sum / numbers.size(), dev = 0;
  for (float x : numbers) dev += fabs(x - mean);
  return dev / numbers.size();
}
int main() {
  assert(fabs(mean_absolute_deviation({1.0, 2.0, 3.0}) - 2.0 / 3.0) < 1e-4);
  assert(fabs(mean_absolute_deviation({1.0, 2.0, 3.0, 4.0}) - 1.0) < 1e-4);
  puts("TEST-0...PASSED");
}
`,
  },
  {
    language: "go",
    code: `package main

import "fmt"

func intersperse(numbers []int, delimeter int) []int {
	out := []int{}
	for i, n := range numbers {
		if i > 0 {
			out = append(out, delimeter)
		}
		out = append(out, n)
	}
	return out
}

func main() {
	got := intersperse([]int{5, 6, 3, 2}, 8)
	want := []int{5, 8, 6, 8, 3, 8, 2}
	for i := range want {
		if got[i] != want[i] {
			panic("TEST-0...FAILED")
		}
	}
	fmt.Println("TEST-0...PASSED")
}
`,
  },
  {
    language: "rust",
    code: `fn parse_nested_parens(paren_string: &str) -> Vec<i32> {
    paren_string
        .split_whitespace()
        .map(|group| {
            let (mut depth, mut max) = (0, 0);
            for c in group.chars() {
                if c == '(' { depth += 1; max = max.max(depth); } else { depth -= 1; }
            }
            max
        })
        .collect()
}

fn main() {
    assert_eq!(parse_nested_parens("(()()) ((())) () ((())()())"), vec![2, 3, 1, 3]);
    assert_eq!(parse_nested_parens("() (()) ((())) (((())))"), vec![1, 2, 3, 4]);
    println!("TEST-0...PASSED");
}
`,
  },
  {
    language: "java",
    code: `import java.util.*;

public class Main {
    static List<String> filterBySubstring(List<String> strings, String substring) {
        List<String> out = new ArrayList<>();
        for (String s : strings) if (s.contains(substring)) out.add(s);
        return out;
    }
    public static void main(String[] args) {
        if (!filterBySubstring(List.of("xxx", "asd", "xxy", "john doe", "xxxAAA", "xxx"), "xxx")
                .equals(List.of("xxx", "xxxAAA", "xxx"))) throw new AssertionError("TEST-0...FAILED");
        System.out.println("TEST-0...PASSED");
    }
}
`,
  },
];
