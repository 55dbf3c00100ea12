// The test LLM server scripted to play every part simulate and correct need: the weak model's first
// answer, the strong model answering execution results, the reviewer giving JSON feedback (plain, in
// prose, or not JSON at all), the strong model writing deliberate mistakes, checks and corrections.
// Each record's query carries `[case:NAME]`; a query without one gets the generic script (a Python
// answer derived from the query, so the same query always gets the same dialogue).
import { createHash } from "node:crypto";
import type { ReceivedRequest, Reply } from "../support/llm-server.js";
import { fence } from "../validate/fixtures.js";

const json = (satisfied: string, notSatisfied: string, feedback: string) =>
  JSON.stringify({ satisfied, not_satisfied: notSatisfied, feedback }, null, 2);

export const WEAK_MODEL = "test-weak";
export const STRONG_MODEL = "test-strong";

/** What the strong model sees when it answers in the interpreter conversation. */
interface Turn {
  /** "Execution result:" turns so far */
  execs: number;
  /** the last user message */
  last: string;
  /** the simulated user's feedback has been given and is the last user message: this answer refines */
  refining: boolean;
}

interface Case {
  weak?: string;
  strong?: (turn: Turn) => string;
  review?: (attempt: 1 | 2) => string;
  broken?: string;
  check?: string;
  fix?: (last: string) => string;
  /** correct's analysis of the corrected run (default: a sentence naming its output) */
  analysis?: string;
}

const ANALYSIS = (last: string) =>
  `The code ran and printed: ${last.replace(/^Execution result: \n/, "").slice(0, 60)}. The task is done.`;

export const CASES: Record<string, Case> = {
  "py-works": {
    weak: `I will sum the list.\n${fence("python", "def total(xs):\n    return sum(xs)\n\nprint(total([1, 2, 3]))")}`,
    strong: (t) =>
      t.refining
        ? `Here it is with a docstring.\n${fence("python", 'def total(xs):\n    """Sum of the numbers in xs."""\n    return sum(xs)\n\nprint(total([4, 5]))')}`
        : ANALYSIS(t.last),
    review: () =>
      json(
        "It sums the list.",
        "The function has no docstring or comments.",
        "Please add a docstring and comments so the function is easier to follow.",
      ),
  },
  "js-fixed": {
    weak: `Doubling a number:\n${fence("javascript", "function double(x) { return x * 2; }\nconsole.log(doubel(21));")}`,
    strong: (t) => {
      if (t.last.includes("ReferenceError"))
        return `A typo in the call. Fixed:\n${fence("javascript", "function double(x) { return x * 2; }\nconsole.log(double(21));")}`;
      if (t.refining)
        return `With a check of the input:\n${fence("javascript", 'function double(x) {\n  if (typeof x !== "number") throw new TypeError("double expects a number");\n  return x * 2;\n}\nconsole.log(double(21));')}`;
      return ANALYSIS(t.last);
    },
    review: () =>
      'Here is my feedback on the latest code:\n```json\n{\n  "satisfied": "It doubles the number.",\n  "not_satisfied": "No input validation.",\n  "feedback": "Could you validate that the input is a number before doubling it?",\n}\n```\nI hope this helps!',
  },
  "cpp-never": {
    weak: `In C++:\n${fence("cpp", "#include <iostream>\nint main() { std::cout << value << std::endl; }")}`,
    strong: (t) =>
      `Let me fix that.\n${fence("cpp", `#include <iostream>\nint main() { std::cout << value${t.execs} << std::endl; }`)}`,
    review: () =>
      json(
        "None.",
        "The code does not compile.",
        "The code still does not compile; please declare the variable.",
      ),
  },
  // the strong model answers a clean run with nothing at all
  "py-empty": {
    weak: fence("python", "print('ready')"),
    strong: () => "",
  },
  // after every clean run the strong model offers yet another version, past the cap
  "py-restless": {
    weak: fence("python", "print('version 0')"),
    strong: (t) => `Another way:\n${fence("python", `print('version ${t.execs}')`)}`,
    review: () => json("It prints.", "Nothing.", "Please explain the versions."),
  },
  "go-prose": {
    weak: `In Go:\n${fence("go", 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println(7 * 6)\n}')}`,
    strong: (t) =>
      t.refining
        ? `Faster for large inputs:\n${fence("go", 'package main\n\nimport "fmt"\n\nfunc main() {\n\tx := 7\n\tfmt.Println(x * 6)\n}')}`
        : ANALYSIS(t.last),
    review: () =>
      'Sure. {"satisfied": "Prints the product.", "not_satisfied": "The time complexity could be better for large inputs.", "feedback": "Can you make it more efficient for larger inputs?"} Let me know if you need more.',
  },
  "py-badjson": {
    weak: fence("python", "print('hello')"),
    strong: (t) => ANALYSIS(t.last),
    review: (attempt) =>
      attempt === 1 ? "I think the code is fine overall." : "Still fine, nothing to add.",
  },
  "py-nocode": {
    weak: "You could loop over the numbers and add each one to a running total.",
    strong: (t) =>
      t.last.startsWith("Execution result")
        ? ANALYSIS(t.last)
        : `Here is the code:\n${fence("python", "total = 0\nfor x in [1, 2, 3]:\n    total += x\nprint(total)")}`,
    review: () => json("An idea is given.", "No code was written.", "Please write the code so I can run it."),
  },
  "py-timeout": {
    weak: fence("python", "while True:\n    pass"),
    strong: (t) =>
      t.last.includes("timed out")
        ? `The loop never ends. Fixed:\n${fence("python", "for i in range(3):\n    pass\nprint('finished')")}`
        : t.refining
          ? `Commented:\n${fence("python", "# three quick rounds\nfor i in range(3):\n    pass\nprint('finished again')")}`
          : ANALYSIS(t.last),
    review: () => json("It ends now.", "No comments.", "Please add a comment saying what the loop is for."),
  },
  "py-long": {
    weak: fence("python", "for i in range(3000):\n    print(i)"),
    strong: (t) =>
      t.refining ? `Less output:\n${fence("python", "print(list(range(5)))")}` : ANALYSIS(t.last),
    review: () =>
      json(
        "It prints.",
        "The output is too long to read.",
        "Please print less output so the result is readable.",
      ),
  },
  "py-notebook": {
    weak: `A function for the sum:\n${fence("python", "def total(xs):\n    return sum(xs)")}`,
    strong: (t) =>
      t.refining
        ? `With a label:\n${fence("python", "print('total:', total([4, 5]))")}`
        : t.execs === 1
          ? `It is defined; let me call it.\n${fence("python", "print(total([1, 2]))")}`
          : ANALYSIS(t.last),
    review: () => json("It sums.", "The printed total has no label.", "Please print the total with a label."),
  },
  "py-random": {
    weak: fence("python", "import random\nprint(random.getrandbits(62))"),
    strong: (t) =>
      t.refining
        ? fence("python", "import random\nprint('again', random.getrandbits(62))")
        : ANALYSIS(t.last),
    review: () => json("It prints a number.", "No seed.", "Please explain in a comment why no seed is set."),
  },
  // correct
  "corr-syntax": {
    broken: `Computing the mean:\n${fence("python", "def mean(xs):\n    return sum(xs) / len(xs\n\nprint(mean([1, 2, 3]))")}`,
    fix: () =>
      `A parenthesis was missing:\n${fence("python", "def mean(xs):\n    return sum(xs) / len(xs)\n\nprint(mean([1, 2, 3]))")}`,
  },
  "corr-logical": {
    broken: `Computing the mean:\n${fence("python", "def mean(xs):\n    return sum(xs)\n\nprint(mean([2, 4]))")}`,
    check: fence("python", "assert mean([2, 4]) == 3\nassert mean([5]) == 5"),
    fix: (last) =>
      last.includes("AssertionError")
        ? `The sum must be divided by the count:\n${fence("python", "def mean(xs):\n    return sum(xs) / len(xs)\n\nprint(mean([2, 4]))")}`
        : "unexpected",
  },
  "corr-runs": {
    broken: `Computing the mean:\n${fence("python", "def mean(xs):\n    return sum(xs) / len(xs)\n\nprint(mean([2, 4]))")}`,
    check: fence("python", "assert mean([2, 4]) == 3"),
  },
  "corr-fix-fails": {
    broken: fence("javascript", "console.log(totl);"),
    fix: () => `Fixed the name:\n${fence("javascript", "console.log(totall);")}`,
  },
  "corr-name": {
    broken: fence("javascript", "const total = [1, 2, 3].reduce((a, b) => a + b, 0);\nconsole.log(totl);"),
    fix: () =>
      `The variable name had a typo:\n${fence("javascript", "const total = [1, 2, 3].reduce((a, b) => a + b, 0);\nconsole.log(total);")}`,
  },
  "corr-cpp-type": {
    broken: fence("cpp", '#include <iostream>\nint main() { int n = "five"; std::cout << n << std::endl; }'),
    fix: () =>
      `Use a number:\n${fence("cpp", "#include <iostream>\nint main() { int n = 5; std::cout << n << std::endl; }")}`,
  },
  "corr-timeout": {
    broken: fence("python", "n = 0\nwhile n < 10:\n    print(n)"),
    fix: () => `n was never increased:\n${fence("python", "n = 0\nwhile n < 10:\n    n += 1\nprint(n)")}`,
  },
  "corr-empty-analysis": {
    broken: fence("javascript", "console.log(totl);"),
    fix: () => `Fixed:\n${fence("javascript", "console.log(6);")}`,
    analysis: "",
  },
  "corr-comment": {
    broken: `Computing the mean:\n${fence("python", "def mean(xs):\n    return sum(xs) / len(xs  # Syntax Error: missing closing parenthesis\n\nprint(mean([1, 2, 3]))")}`,
    fix: () =>
      `Fixed:\n${fence("python", "def mean(xs):\n    return sum(xs) / len(xs)\n\nprint(mean([1, 2, 3]))")}`,
  },
  "corr-gives-away": {
    broken: `Here is the code with a deliberate error:\n${fence("python", "print(undefined_name)")}`,
  },
};

export const REMINDER_MARK = "Your answer could not be read";
const isReviewer = (r: ReceivedRequest) =>
  r.body.messages[0]?.content.startsWith("You are a user who gives feedback") ?? false;
const isErrorPrompt = (r: ReceivedRequest) =>
  r.body.messages[0]?.content.includes("You MUST make mistakes") ?? false;
const isCheck = (r: ReceivedRequest) =>
  r.body.messages.at(-1)?.content.startsWith("Below are a programming task") ?? false;

export function caseOf(r: ReceivedRequest): string | undefined {
  for (const m of r.body.messages) {
    const found = /\[case:([\w-]+)\]/.exec(m.content);
    if (found) return found[1];
  }
  return undefined;
}

export type Part = "weak" | "strong" | "reviewer" | "broken" | "check" | "fix" | "scorer";

export function partOf(r: ReceivedRequest): Part {
  if (r.body.model === WEAK_MODEL) return "weak";
  if (r.body.model !== STRONG_MODEL) return "scorer";
  if (isReviewer(r)) return "reviewer";
  if (isErrorPrompt(r)) return "broken";
  if (isCheck(r)) return "check";
  return "strong";
}

/** The generic script for queries without a case: deterministic Python derived from the query. */
function generic(r: ReceivedRequest, part: Part): string {
  const query = r.body.messages.find((m) => m.role === "user")?.content ?? "";
  const n = Number.parseInt(createHash("sha1").update(query).digest("hex").slice(0, 6), 16) % 1000;
  switch (part) {
    case "scorer":
      return "Score: 5\n\nThis query needs several steps.";
    case "weak":
      return `Let me compute it.\n${fence("python", `values = list(range(${n % 50}))\nprint(sum(values) + ${n})`)}`;
    case "broken":
      return `Let me compute it.\n${fence("python", `values = list(range(${n % 50}))\nprint(sum(valuez) + ${n})`)}`;
    case "check":
      return fence("python", "assert True");
    case "reviewer":
      return json("It runs.", "No comments.", `Please add a comment explaining the constant ${n}.`);
    default: {
      const last = r.body.messages.at(-1)!.content;
      if (last.startsWith("Execution result") && last.includes("NameError")) {
        return `A misspelt name:\n${fence("python", `values = list(range(${n % 50}))\nprint(sum(values) + ${n})`)}`;
      }
      if (last.startsWith("Execution result")) return ANALYSIS(last);
      return `With a comment:\n${fence("python", `# ${n} is the offset asked for\nprint(${n} * 2)`)}`;
    }
  }
}

export function scriptedReply(r: ReceivedRequest): Reply {
  const part = partOf(r);
  const name = caseOf(r);
  const script = name ? CASES[name] : undefined;
  if (!script) return generic(r, part);
  const messages = r.body.messages;
  const last = messages.at(-1)!.content;
  switch (part) {
    case "weak":
      return script.weak ?? "no weak script";
    case "reviewer":
      return script.review?.(last.startsWith(REMINDER_MARK) ? 2 : 1) ?? "no review script";
    case "broken":
      return script.broken ?? "no broken script";
    case "check":
      return script.check ?? "no check script";
    case "scorer":
      return "Score: 5";
    default: {
      // the correction conversation starts with the broken answer; the simulation's with the weak one
      if (script.fix && messages.length === 4) return script.fix(last);
      if (script.fix) return script.analysis ?? ANALYSIS(last);
      const afterFeedback = messages.some(
        (m) => m.role === "user" && !m.content.startsWith("Execution result") && m !== messages[1],
      );
      const turn: Turn = {
        execs: messages.filter((m) => m.role === "user" && m.content.startsWith("Execution result")).length,
        last,
        refining: afterFeedback && !last.startsWith("Execution result"),
      };
      return script.strong?.(turn) ?? "no strong script";
    }
  }
}
