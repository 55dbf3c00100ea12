// The readings the quality gates rest on, one by one: which language a request names, whether it asks
// for code, and what an answer says its code prints. Each errs on the side of naming nothing, since
// what they name drops a dialogue.
import { describe, expect, it } from "vitest";
import { askedLanguage, asksForCode } from "../../stages/validate/asks.js";
import { agrees, statedOutputs } from "../../stages/validate/stated-output.js";

describe("askedLanguage", () => {
  it("names the one language a request asks for", () => {
    expect(askedLanguage("Write a Go program that reverses a slice.")).toBe("go");
    expect(askedLanguage("How do I do this in Golang?")).toBe("go");
    expect(askedLanguage("Implement quicksort in C++.")).toBe("cpp");
    expect(askedLanguage("Write a function in C that copies a string.")).toBe("c");
    expect(askedLanguage("Write a JavaScript function that debounces another.")).toBe("javascript");
    expect(askedLanguage("Parse a CSV file with Python 3.")).toBe("python");
  });

  it("names nothing for English words, several languages, or none", () => {
    expect(askedLanguage("Let's go through the steps and write a sorting function.")).toBeUndefined();
    expect(askedLanguage("Remove the rust from this swift answer, then write the code.")).toBeUndefined();
    expect(askedLanguage("Convert this Python code to Go code.")).toBeUndefined();
    expect(askedLanguage("Write a function that sums a list.")).toBeUndefined();
  });
});

describe("asksForCode", () => {
  it("needs a verb of writing and a noun for code in one sentence", () => {
    expect(asksForCode("Write a function that reverses a string.")).toBe(true);
    expect(asksForCode("Please fix the bug in my script.")).toBe(true);
    expect(asksForCode("What is the time complexity of binary search?")).toBe(false);
    expect(asksForCode("Explain recursion without code.")).toBe(false);
    expect(asksForCode("Write an essay. The function of art is debated.")).toBe(false);
  });
});

describe("statedOutputs", () => {
  it("reads an Output block, an Output line and a quoted phrase, and compares them with what ran", () => {
    const block = statedOutputs("```python\nprint(4)\n```\nOutput:\n```\n4\n```");
    expect(block).toEqual([{ text: "4", whole: true }]);
    expect(agrees(block[0]!, "4\n")).toBe(true);
    expect(agrees(block[0]!, "5\n")).toBe(false);
    const line = statedOutputs("Running it gives\nOutput: [1, 2]\n");
    expect(line).toEqual([{ text: "[1, 2]", whole: false }]);
    expect(agrees(line[0]!, "[1, 2]\n")).toBe(true);
    const phrase = statedOutputs("When run, it prints `Hello, world!`.");
    expect(phrase).toEqual([{ text: "Hello, world!", whole: false }]);
    expect(agrees(phrase[0]!, "Hello, world!\n")).toBe(true);
    expect(agrees(phrase[0]!, "Hello!\n")).toBe(false);
  });

  it("takes an elided claim at its word and never reads a code block as output", () => {
    const elided = statedOutputs("Output:\n```\n0\n1\n...\n```");
    expect(agrees(elided[0]!, "0\n1\n2\n3\n")).toBe(true);
    expect(statedOutputs("Here is the code that prints:\n```python\nprint(1)\n```")).toEqual([]);
    expect(statedOutputs("The function returns the sum of the list.")).toEqual([]);
  });
});
