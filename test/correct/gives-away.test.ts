// What correct drops as `mentions-mistake`: words of intent in any answer, and in the answer that holds
// the mistake also a comment that labels it or prose that names the kind of error; ordinary comments
// about error handling stay.
import { describe, expect, it } from "vitest";
import { givesAway } from "../../stages/correct/gives-away.js";

const answer = (code: string, lang = "python") =>
  `Here is the code:\n\`\`\`${lang}\n${code}\n\`\`\`\nIt works.`;

describe("an answer that gives the deliberate mistake away", () => {
  it("is caught by words of intent, in the mistake and in the correction", () => {
    for (const text of [
      "Here is the code with a deliberate error.",
      answer("x = 1  # intentionally wrong"),
    ]) {
      expect(givesAway(text, true)).toBeDefined();
      expect(givesAway(text, false)).toBeDefined();
    }
  });

  it("is caught, in the mistake's answer, by a comment that labels the mistake", () => {
    for (const code of [
      "def mean(xs):\n    return sum(xs) / len(xs  # Syntax Error: missing closing parenthesis",
      "def mean(xs):\n    return sum(xs)  # Logical error: forgot to divide by the count",
      "print(totl)  # NameError here",
      "n = 0\nwhile n < 10:  # n is never updated\n    print(n)",
      "def total(xs):\n    return xs[0]  # bug: should be sum(xs)",
    ]) {
      expect(givesAway(answer(code), true), code).toBeDefined();
    }
    expect(givesAway(answer('int main() { int n = "five"; } // type error', "cpp"), true)).toBeDefined();
    expect(givesAway(answer("console.log(totl); // typo", "javascript"), true)).toBeDefined();
  });

  it("is caught, in the mistake's answer, by prose that names the kind of error", () => {
    expect(givesAway(`This raises a TypeError.\n${answer("print('a' + 1)")}`, true)).toBeDefined();
    expect(
      givesAway("The loop below is an infinite loop.\n```python\nwhile True: pass\n```", true),
    ).toBeDefined();
  });

  it("leaves comments about error handling, and a correction that explains the error it fixed", () => {
    const handling = answer(
      "def mean(xs):\n    # raise an error if the list is empty\n    if not xs:\n        raise ValueError('empty')\n    # skip missing values\n    return sum(x for x in xs if x is not None) / len(xs)",
    );
    expect(givesAway(handling, true)).toBeUndefined();
    expect(givesAway(answer("#include <iostream>\nint main() { return 0; }", "cpp"), true)).toBeUndefined();
    const fix = `The SyntaxError came from a missing parenthesis; it was a typo. Fixed:\n${answer("print(1)")}`;
    expect(givesAway(fix, false)).toBeUndefined();
  });
});
