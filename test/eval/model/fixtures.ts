// Hand-written tasks in the column layouts of the four benchmark repos (openai/openai_humaneval,
// evalplus/humanevalplus, google-research-datasets/mbpp, evalplus/mbppplus), written as Parquet into
// a directory the test hub serves. Each task also has a wrong answer the test models give before
// feedback: a wrong value, an exception and an endless loop, so each of the paper's three feedback
// cases shows up.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { HUMANEVAL_COLUMNS, MBPP_COLUMNS, parquetTable } from "../../sources/sample-parquet.js";

export interface FixtureTask {
  /** what the tests call */
  entry: string;
  /** complete canonical code, as the "correct" model answers it */
  correct: string;
  /** what the model answers before feedback */
  wrong: string;
}

// ---- HumanEval: prompt + canonical_solution (a body), test defines check(candidate) ----

const VOWELS_PROMPT = `def count_vowels(word: str) -> int:
    """ Count the vowels (a, e, i, o, u, either case) in word.
    >>> count_vowels('banana')
    3
    """
`;
const VOWELS_BODY = "    return sum(1 for ch in word.lower() if ch in 'aeiou')\n";

const EVEN_PROMPT = `def is_even(n: int) -> bool:
    return n % 2 == 0


def keep_even(values: list) -> list:
    """ Return the even numbers of values, in their order, using is_even.
    >>> keep_even([1, 2, 3, 4])
    [2, 4]
    """
`;
const EVEN_BODY = "    return [v for v in values if is_even(v)]\n";

const SPREAD_PROMPT = `from typing import List


def spread(values: List[int]) -> int:
    """ The largest value minus the smallest; 0 for an empty list.
    >>> spread([4, 1, 7])
    6
    """
`;
const SPREAD_BODY = "    if not values:\n        return 0\n    return max(values) - min(values)\n";

export const HUMANEVAL_TASKS: Record<string, FixtureTask> = {
  "HumanEval/0": {
    entry: "count_vowels",
    correct: VOWELS_PROMPT + VOWELS_BODY,
    // forgets the upper case: a wrong value for 'AEIOU'
    wrong: "def count_vowels(word: str) -> int:\n    return sum(1 for ch in word if ch in 'aeiou')\n",
  },
  "HumanEval/1": {
    entry: "keep_even",
    correct: EVEN_PROMPT + EVEN_BODY,
    // a name that does not exist: NameError
    wrong:
      "def keep_even(values: list) -> list:\n    return [v for v in values if is_even(v) and v > minimum]\n",
  },
  "HumanEval/2": {
    entry: "spread",
    correct: SPREAD_PROMPT + SPREAD_BODY,
    // never ends
    wrong: "def spread(values):\n    while values:\n        pass\n    return 0\n",
  },
};

const HUMANEVAL_ROWS = [
  {
    task_id: "HumanEval/0",
    prompt: VOWELS_PROMPT,
    canonical_solution: VOWELS_BODY,
    test: "\n\nMETADATA = {'author': 'fixture'}\n\n\ndef check(candidate):\n    assert candidate('banana') == 3\n    assert candidate('') == 0\n    assert candidate('AEIOU') == 5\n",
    entry_point: "count_vowels",
  },
  {
    task_id: "HumanEval/1",
    prompt: EVEN_PROMPT,
    canonical_solution: EVEN_BODY,
    test: "def check(candidate):\n    assert candidate([1, 2, 3, 4]) == [2, 4]\n    assert candidate([]) == []\n",
    entry_point: "keep_even",
  },
  {
    task_id: "HumanEval/2",
    prompt: SPREAD_PROMPT,
    canonical_solution: SPREAD_BODY,
    test: "def check(candidate):\n    assert candidate([4, 1, 7]) == 6\n    assert candidate([]) == 0\n",
    entry_point: "spread",
  },
];

// EvalPlus checks its inputs' results through this `assertion` helper, in HumanEval+ and MBPP+ alike.
const EVALPLUS_ASSERTION = `import numpy as np


def assertion(out, exp, atol):
    if atol == 0 and isinstance(exp, float):
        atol = 1e-6
    if out != exp and atol != 0:
        assert np.allclose(out, exp, rtol=1e-07, atol=atol)
    else:
        assert out == exp, f"out: {out}, exp: {exp}"
`;

// HumanEval+ keeps the prompts and adds inputs, checked through the `assertion` helper.
const PLUS_CHECK = (inputs: string, results: string) => `${EVALPLUS_ASSERTION}

def check(candidate):
    inputs = ${inputs}
    results = ${results}
    for i, (inp, exp) in enumerate(zip(inputs, results)):
        assertion(candidate(*inp), exp, 0)
`;

const HUMANEVAL_PLUS_ROWS = [
  {
    ...HUMANEVAL_ROWS[0]!,
    test: PLUS_CHECK("[['banana'], [''], ['AEIOU'], ['rhythm'], ['Queue']]", "[3, 0, 5, 0, 4]"),
  },
  {
    ...HUMANEVAL_ROWS[1]!,
    test: PLUS_CHECK("[[[1, 2, 3, 4]], [[]], [[-2, -1, 0]], [[7]]]", "[[2, 4], [], [-2, 0], []]"),
  },
  {
    ...HUMANEVAL_ROWS[2]!,
    test: PLUS_CHECK("[[[4, 1, 7]], [[]], [[5]], [[-3, 3]]]", "[6, 0, 0, 6]"),
  },
].map(({ task_id, prompt, canonical_solution, entry_point, test }) => ({
  task_id,
  prompt,
  canonical_solution,
  entry_point,
  test,
}));

// ---- MBPP: text, code, test_list (asserts), test_setup_code ----

export const MBPP_TASKS: Record<string, FixtureTask> = {
  "601": {
    entry: "strip_char",
    correct: "def strip_char(s, ch):\n    return s.replace(ch, '')",
    wrong: "def strip_char(s, ch):\n    return s.replace(ch, '', 1)\n",
  },
  "602": {
    entry: "square_sum",
    correct: "def square_sum(n):\n    return sum(i * i for i in range(1, n + 1))",
    wrong: "def square_sum(n):\n    return sum(i * i for i in range(1, n + 1)) / total\n",
  },
};

const MBPP_ROWS = [
  {
    task_id: 601,
    text: "Write a function to remove every occurrence of a given character from a string.",
    code: MBPP_TASKS["601"]!.correct,
    test_list: [
      "assert strip_char('banana', 'a') == 'bnn'",
      "assert strip_char('', 'x') == ''",
      "assert strip_char('mississippi', 's') == 'miiippi'",
    ],
    test_setup_code: "",
    challenge_test_list: [],
  },
  {
    task_id: 602,
    text: "Write a function to find the sum of the squares of the first n natural numbers.",
    code: MBPP_TASKS["602"]!.correct,
    test_list: ["assert square_sum(1) == 1", "assert square_sum(3) == 14", "assert square_sum(0) == 0"],
    test_setup_code: "",
    challenge_test_list: [],
  },
  // not a usable task: no tests at all
  {
    task_id: 603,
    text: "Write a function that does nothing in particular.",
    code: "def nothing():\n    return None",
    test_list: [],
    test_setup_code: "",
    challenge_test_list: [],
  },
];

// ---- MBPP+: code, prompt (a docstring), test_imports, test_list, test (a script) ----

const MBPP_PLUS_SCRIPT = (entry: string, inputs: string, results: string) => `${EVALPLUS_ASSERTION}

inputs = ${inputs}
results = ${results}
for i, (inp, exp) in enumerate(zip(inputs, results)):
    assertion(${entry}(*inp), exp, 0)
`;

const MBPP_PLUS_ROWS = [
  {
    task_id: 601n,
    code: MBPP_TASKS["601"]!.correct,
    prompt: `"""\n${MBPP_ROWS[0]!.text}\nassert strip_char('banana', 'a') == 'bnn'\n"""\n`,
    source_file: "fixture.py",
    test_imports: [],
    test_list: MBPP_ROWS[0]!.test_list,
    test: MBPP_PLUS_SCRIPT(
      "strip_char",
      "[['banana', 'a'], ['', 'x'], ['aaaa', 'a'], ['abcabc', 'c']]",
      "['bnn', '', '', 'abab']",
    ),
  },
  {
    task_id: 602n,
    code: MBPP_TASKS["602"]!.correct,
    prompt: `"""\n${MBPP_ROWS[1]!.text}\nassert square_sum(3) == 14\n"""\n`,
    source_file: "fixture.py",
    test_imports: ["import math"],
    test_list: MBPP_ROWS[1]!.test_list,
    test: MBPP_PLUS_SCRIPT("square_sum", "[[1], [3], [0], [10]]", "[1, 14, 0, 385]"),
  },
];

function put(root: string, file: string, bytes: Buffer | string): void {
  const target = path.join(root, file);
  mkdirSync(path.dirname(target), { recursive: true });
  writeFileSync(target, bytes);
}

/** Writes the four benchmark repos (and one whose file is not Parquet) under `root`. */
export function writeBenchmarkRepos(root: string): void {
  put(
    root,
    "openai/openai_humaneval/openai_humaneval/test-00000-of-00001.parquet",
    parquetTable(HUMANEVAL_ROWS, HUMANEVAL_COLUMNS),
  );
  put(
    root,
    "evalplus/humanevalplus/data/test-00000-of-00001-fixture.parquet",
    parquetTable(HUMANEVAL_PLUS_ROWS, [
      ["task_id", "string"],
      ["prompt", "string"],
      ["canonical_solution", "string"],
      ["entry_point", "string"],
      ["test", "string"],
    ]),
  );
  put(
    root,
    "google-research-datasets/mbpp/full/test-00000-of-00001.parquet",
    parquetTable(MBPP_ROWS, MBPP_COLUMNS),
  );
  put(
    root,
    "evalplus/mbppplus/data/test-00000-of-00001-fixture.parquet",
    parquetTable(MBPP_PLUS_ROWS, [
      ["task_id", "int64"],
      ["code", "string"],
      ["prompt", "string"],
      ["source_file", "string"],
      ["test_imports", "strings"],
      ["test_list", "strings"],
      ["test", "string"],
    ]),
  );
  put(root, "broken/humaneval/openai_humaneval/test-00000-of-00001.parquet", "this is not a parquet file\n");
}

/** The fixture task a prompt is about: found by the function name its text mentions. */
export function taskOfPrompt(text: string): FixtureTask | undefined {
  const all = [...Object.values(HUMANEVAL_TASKS), ...Object.values(MBPP_TASKS)];
  return all.find((task) => text.includes(`${task.entry}(`));
}
