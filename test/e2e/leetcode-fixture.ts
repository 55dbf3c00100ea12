// A small TACO in a directory served as a hub (`file:` endpoint): hand-written rows in TACO's column
// layout, written as Parquet, covering both test styles, a `class Solution` starter, a wrong and a
// never-ending solution, TACO's expected complexities, shared tags, and malformed rows.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parquetWriteBuffer } from "hyparquet-writer";
import { SAMPLE_TABLES } from "../sources/sample-parquet.js";

type Row = Record<string, string | null>;

const COLUMNS = SAMPLE_TABLES.find((t) => t.source === "taco-train.jsonl")!.columns.map(([name]) => name);

function row(fields: {
  name: string;
  question: string;
  solutions: string[] | string;
  starter?: string;
  tests: object | string;
  tags: string[];
  source?: string;
  time?: string;
  space?: string;
}): Row {
  const tags = `[${fields.tags.map((t) => `'${t}'`).join(", ")}]`;
  return {
    question: fields.question,
    solutions: typeof fields.solutions === "string" ? fields.solutions : JSON.stringify(fields.solutions),
    starter_code: fields.starter ?? "",
    input_output: typeof fields.tests === "string" ? fields.tests : JSON.stringify(fields.tests),
    difficulty: "EASY",
    raw_tags: tags,
    name: fields.name,
    source: fields.source ?? "leetcode",
    tags,
    skill_types: "[]",
    url: `https://example.org/${fields.source ?? "leetcode"}/${fields.name}`,
    "Expected Auxiliary Space": fields.space ?? "",
    time_limit: null,
    date: "2022-01-01",
    picture_num: "0",
    memory_limit: null,
    "Expected Time Complexity": fields.time ?? "",
  };
}

export const PAIRS_BRUTE = `class Solution:
    def countPairs(self, nums, k):
        count = 0
        for i in range(len(nums)):
            for j in range(i + 1, len(nums)):
                if nums[i] + nums[j] == k:
                    count += 1
        return count
`;
export const PAIRS_HASH = `class Solution:
    def countPairs(self, nums, k):
        seen, count = {}, 0
        for x in nums:
            count += seen.get(k - x, 0)
            seen[x] = seen.get(x, 0) + 1
        return count
`;
/** counts a number with itself too: wrong on [1, 1, 1] */
export const PAIRS_WRONG = `class Solution:
    def countPairs(self, nums, k):
        return sum(1 for i in range(len(nums)) for j in range(i, len(nums)) if nums[i] + nums[j] == k)
`;
/** forgets to move on when the sum does not match: never ends */
export const PAIRS_HANGS = `class Solution:
    def countPairs(self, nums, k):
        i, count = 0, 0
        while i < len(nums):
            if nums[i] * 2 == k:
                count += 1
                i += 1
        return count
`;
export const RUNNING = `class Solution:
    def runningSum(self, nums: List[int]) -> List[int]:
        out, total = [], 0
        for x in nums:
            total += x
            out.append(total)
        return out
`;
export const UNIQUE_COUNTER = `class Solution:
    def firstUniqChar(self, s):
        counts = Counter(s)
        for i, c in enumerate(s):
            if counts[c] == 1:
                return i
        return -1
`;
export const UNIQUE_SCAN = `class Solution:
    def firstUniqChar(self, s):
        for i, c in enumerate(s):
            if s.count(c) == 1:
                return i
        return -1
`;
export const VOWELS = "s = input()\nprint(sum(1 for c in s if c in 'aeiou'))\n";
export const VOWELS_WRONG = "s = input()\nprint(len(s))\n";

/** A Java translation of PAIRS_HASH that passes, and a C++ one that is wrong. */
export const PAIRS_JAVA = `import java.util.*;

class Solution {
    public int countPairs(List<Integer> nums, int k) {
        Map<Integer, Integer> seen = new HashMap<>();
        int count = 0;
        for (int x : nums) {
            count += seen.getOrDefault(k - x, 0);
            seen.put(x, seen.getOrDefault(x, 0) + 1);
        }
        return count;
    }
}
`;
export const PAIRS_CPP_WRONG = `#include <vector>
using namespace std;

class Solution {
public:
    int countPairs(vector<int> nums, int k) {
        return (int)nums.size();
    }
};
`;

export const ROWS: Row[] = [
  row({
    name: "count-pairs",
    question:
      "Given an integer array nums and an integer k, return how many pairs i < j have nums[i] + nums[j] == k.",
    starter: "class Solution:\n    def countPairs(self, nums: List[int], k: int) -> int:\n        ",
    solutions: [PAIRS_WRONG, PAIRS_BRUTE, PAIRS_HANGS, PAIRS_HASH],
    // TACO wraps some expected values in a list: [2] stands for 2
    tests: {
      inputs: [
        [[1, 2, 3, 4], 5],
        [[1, 1, 1], 2],
        [[], 0],
      ],
      outputs: [[2], 3, 0],
      fn_name: "countPairs",
    },
    tags: ["Array", "Hash Table"],
    time: "O(n)",
    space: "O(n)",
  }),
  row({
    name: "running-sum",
    question: "Return the running sum of nums: out[i] = nums[0] + ... + nums[i].",
    starter: "class Solution:\n    def runningSum(self, nums: List[int]) -> List[int]:\n        ",
    solutions: [RUNNING],
    tests: { inputs: [[[1, 2, 3]], [[5]]], outputs: [[1, 3, 6], [5]], fn_name: "runningSum" },
    tags: ["Array", "Prefix Sum"],
  }),
  row({
    name: "count-vowels",
    question: "Read a line of lower-case letters and print how many of them are vowels.",
    solutions: [VOWELS_WRONG, VOWELS],
    tests: { inputs: ["hello\n", "sky\n"], outputs: ["2\n", "0\n"] },
    tags: ["String"],
  }),
  row({
    name: "first-unique-character",
    question: "Return the index of the first character of s that occurs only once, or -1.",
    starter: "class Solution:\n    def firstUniqChar(self, s: str) -> int:\n        ",
    solutions: [UNIQUE_SCAN, UNIQUE_COUNTER],
    tests: { inputs: [["leetcode"], ["aabb"]], outputs: [0, -1], fn_name: "firstUniqChar" },
    tags: ["String", "Hash Table"],
  }),
  row({
    name: "sum-two",
    source: "codeforces",
    question: "Read a and b, print a + b.",
    solutions: ["print(sum(map(int, input().split())))"],
    tests: { inputs: ["1 2\n"], outputs: ["3\n"] },
    tags: ["Math"],
  }),
  row({
    name: "broken-tests",
    question: "Return n squared.",
    starter: "class Solution:\n    def square(self, n: int) -> int:\n        ",
    solutions: ["class Solution:\n    def square(self, n):\n        return n * n\n"],
    tests: '{"inputs": [[2]], "outputs": [4], "fn_name": "square"',
    tags: ["Math"],
  }),
  row({
    name: "no-solutions",
    question: "Return n cubed.",
    solutions: [],
    tests: { inputs: [[2]], outputs: [8], fn_name: "cube" },
    tags: ["Math"],
  }),
];

/** Writes the fixture as `<dir>/BAAI/TACO/ALL/train-00000-of-00001.parquet`; returns `dir`. */
export function writeTacoFixture(dir: string, rows: Row[] = ROWS): string {
  const file = path.join(dir, "BAAI/TACO/ALL/train-00000-of-00001.parquet");
  mkdirSync(path.dirname(file), { recursive: true });
  const columnData = COLUMNS.map((name) => ({
    name,
    data: rows.map((r) => r[name] ?? null),
    type: "STRING" as const,
    nullable: true,
  }));
  writeFileSync(file, Buffer.from(parquetWriteBuffer({ columnData })));
  return dir;
}

/** `--set` arguments that make `download` fetch only the fixture's TACO. */
export const TACO_ONLY = [
  "--set",
  "stages.download.sources=[{name: taco, adapter: none, repo: BAAI/TACO, files: ['ALL/*.parquet']}]",
];
