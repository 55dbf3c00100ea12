import { describe, expect, it } from "vitest";
import { detectLanguage } from "../../pipeline/code/detect.js";
import { definesEntryPoint, extractCodeBlocks, extractMainCode } from "../../pipeline/code/extract.js";

const fence = "```";

describe("extractCodeBlocks", () => {
  it("returns complete fenced blocks with canonical languages, in order", () => {
    const answer = [
      "Here is the solution:",
      `${fence}Python3`,
      "def f(x):",
      "    return x + 1",
      fence,
      "And in C++:",
      `${fence}c++`,
      "int f(int x) { return x + 1; }",
      fence,
      "Output:",
      `${fence}text`,
      "2",
      fence,
    ].join("\n");
    expect(extractCodeBlocks(answer)).toEqual([
      { lang: "python", tag: "Python3", code: "def f(x):\n    return x + 1", fenced: true, complete: true },
      { lang: "cpp", tag: "c++", code: "int f(int x) { return x + 1; }", fenced: true, complete: true },
      { lang: undefined, tag: "text", code: "2", fenced: true, complete: true },
    ]);
  });

  it("detects the language of an untagged fence", () => {
    const answer = `${fence}\npackage main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println(1)\n}\n${fence}`;
    const [block] = extractCodeBlocks(answer);
    expect(block?.lang).toBe("go");
    expect(block?.tag).toBe("");
  });

  it("keeps an unterminated fence, marked incomplete", () => {
    const answer = `Sure:\n${fence}js\nfunction f(a) {\n  return a;\n`;
    expect(extractCodeBlocks(answer)).toEqual([
      { lang: "javascript", tag: "js", code: "function f(a) {\n  return a;", fenced: true, complete: false },
    ]);
  });

  it("handles ~~~ fences, longer fences containing ``` and fences indented in lists", () => {
    const answer = [
      "1. First step:",
      "   ```ruby",
      "   def f",
      "     1",
      "   end",
      "   ```",
      "~~~~markdown",
      "```py",
      "x = 1",
      "```",
      "~~~~",
    ].join("\n");
    const blocks = extractCodeBlocks(answer);
    expect(blocks.map((b) => [b.lang, b.code])).toEqual([
      ["ruby", "def f\n  1\nend"],
      ["markdown", "```py\nx = 1\n```"],
    ]);
  });

  it("accepts a closing fence glued to the last line of code", () => {
    const answer = `${fence}python\ndef f():\n    return 1${fence}\nDone.`;
    expect(extractCodeBlocks(answer)).toEqual([
      { lang: "python", tag: "python", code: "def f():\n    return 1", fenced: true, complete: true },
    ]);
  });

  it("normalises CRLF line endings", () => {
    const answer = `${fence}python\r\nx = 1\r\ny = 2\r\n${fence}\r\n`;
    expect(extractCodeBlocks(answer)[0]?.code).toBe("x = 1\ny = 2");
  });

  it("finds code without fences by its shape, and leaves prose out", () => {
    const answer = [
      "You can solve this with a simple loop over the list of numbers.",
      "",
      "def total(xs):",
      "    s = 0",
      "    for x in xs:",
      "        s += x",
      "    return s",
      "",
      "This runs in linear time and uses constant extra space overall.",
    ].join("\n");
    const blocks = extractCodeBlocks(answer);
    expect(blocks).toEqual([
      {
        lang: "python",
        tag: "",
        code: "def total(xs):\n    s = 0\n    for x in xs:\n        s += x\n    return s",
        fenced: false,
        complete: true,
      },
    ]);
  });

  it("finds nothing in plain prose", () => {
    expect(extractCodeBlocks("I cannot help with that request, sorry about the trouble.")).toEqual([]);
  });

  it("stays fast on a pathological line", () => {
    const line = `${"a-".repeat(5000)}!`;
    expect(extractCodeBlocks(line)).toEqual([]);
    expect(detectLanguage(`${"word ".repeat(3000)}x`)).toBeUndefined();
  });
});

describe("extractMainCode", () => {
  const answer = [
    "Solution:",
    `${fence}python`,
    "def helper(x):",
    "    return x * 2",
    "",
    "def solve(xs):",
    "    return [helper(x) for x in xs]",
    "",
    'if __name__ == "__main__":',
    "    print(solve([1, 2]))",
    fence,
    "Usage:",
    `${fence}python`,
    "print(solve([3]))",
    fence,
    `${fence}bash`,
    "python3 main.py --with-a-very-long-argument-list --that-makes-this-block-the-longest-one-of-all",
    fence,
  ].join("\n");

  it("prefers the block that defines the entry point", () => {
    const block = extractMainCode(answer, { language: "python", entryPoint: "solve" });
    expect(block?.code.startsWith("def helper(x):")).toBe(true);
  });

  it("filters by language and takes the longest block otherwise", () => {
    expect(extractMainCode(answer, { language: "shell" })?.code).toContain("python3 main.py");
    expect(extractMainCode(answer, { language: "python" })?.code).toContain("def solve");
    expect(extractMainCode(answer, { language: "rust" })).toBeUndefined();
  });

  it("removes the main guard when asked", () => {
    const block = extractMainCode(answer, { language: "python", entryPoint: "solve", removeMain: true });
    expect(block?.code).toBe(
      "def helper(x):\n    return x * 2\n\ndef solve(xs):\n    return [helper(x) for x in xs]\n",
    );
  });

  it("ranks complete fences over an unterminated one", () => {
    const cut = `${fence}js\nfunction a() { return 1; }\n${fence}\n${fence}js\nfunction b() {\n  return 2; // a much longer block that was cut`;
    expect(extractMainCode(cut, { language: "javascript" })?.code).toBe("function a() { return 1; }");
    expect(extractMainCode(cut, { language: "javascript", entryPoint: "b" })?.complete).toBe(false);
  });

  it("prefers code in the language over a longer untagged block of output", () => {
    const withOutput = `${fence}python\nprint(list(range(3)))\n${fence}\nOutput:\n${fence}\n[0, 1, 2] and many more numbers here 3 4 5 6 7 8 9\n${fence}`;
    expect(extractMainCode(withOutput, { language: "python" })?.code).toBe("print(list(range(3)))");
  });

  it("accepts C in C++ and JavaScript in TypeScript, not the reverse", () => {
    const c = `${fence}c\nint add(int a, int b) { return a + b; }\n${fence}`;
    expect(extractMainCode(c, { language: "cpp" })?.lang).toBe("c");
    const js = `${fence}js\nfunction f() { return 1; }\n${fence}`;
    expect(extractMainCode(js, { language: "typescript" })?.lang).toBe("javascript");
    const ts = `${fence}ts\nfunction f(): number { return 1; }\n${fence}`;
    expect(extractMainCode(ts, { language: "javascript" })).toBeUndefined();
  });

  it("ignores output and data blocks when no language is asked for", () => {
    const withOutput = `${fence}text\n1 2 3 4 5 6 7 8 9 10 11 12\n${fence}\n${fence}go\nfunc f() int { return 1 }\n${fence}`;
    expect(extractMainCode(withOutput)?.lang).toBe("go");
  });
});

describe("definesEntryPoint", () => {
  it.each([
    ["def solve(x):\n  pass", "solve"],
    ["async def solve(x):", "solve"],
    ["function solve(a, b) {", "solve"],
    ["const solve = (a) => a;", "solve"],
    ["export const solve: (n: number) => number = (n) => n;", "solve"],
    ["func solve(a int) int {", "solve"],
    ["func (s *S) solve(a int) int {", "solve"],
    ["pub fn solve(a: i32) -> i32 {", "solve"],
    ["public int solve(int a) {", "solve"],
    ["vector<int> solve(const vector<int>& a) const {", "solve"],
    ["public static List<Integer> solve(List<Integer> a) throws Exception {", "solve"],
    ["class Solution {", "Solution"],
    ["def solve(a)\n  a\nend", "solve"],
    ["function solve($a) {", "solve"],
    ["solve <- function(a) {", "solve"],
    ["fun solve(a: Int): Int {", "solve"],
  ])("finds the definition in %j", (code, name) => {
    expect(definesEntryPoint(code, name)).toBe(true);
  });

  it("does not mistake a call for a definition", () => {
    expect(definesEntryPoint("print(solve(3))", "solve")).toBe(false);
    expect(definesEntryPoint("if (solve(x)) {", "solve")).toBe(false);
    expect(definesEntryPoint("def solver(x):", "solve")).toBe(false);
  });
});
