import { describe, expect, it } from "vitest";
import {
  canonicalLanguage,
  isProgrammingLanguage,
  languageFromSandboxId,
  sandboxLanguageId,
} from "../../pipeline/code/languages.js";

describe("canonicalLanguage", () => {
  it.each([
    ["python", "python"],
    ["Python3", "python"],
    ["py", "python"],
    ["js", "javascript"],
    ["Javascript", "javascript"],
    ["node.js", "javascript"],
    ["jsx", "javascript"],
    ["TypeScript", "typescript"],
    ["tsx", "typescript"],
    ["C++", "cpp"],
    ["cxx", "cpp"],
    ["c", "c"],
    ["C#", "csharp"],
    ["CSharp", "csharp"],
    ["cs", "csharp"],
    ["golang", "go"],
    ["rs", "rust"],
    ["rb", "ruby"],
    ["kt", "kotlin"],
    ["mysql", "sql"],
    ["bash", "shell"],
    ["sh", "shell"],
    ["R", "r"],
    ["pl", "perl"],
    ["html", "html"],
    ["scss", "css"],
    ["{.python}", "python"],
    ["language-java", "java"],
    ["python title=main.py", "python"],
    ["py:solution.py", "python"],
  ])("%s -> %s", (tag, expected) => {
    expect(canonicalLanguage(tag)).toBe(expected);
  });

  it("returns undefined for tags that name no language", () => {
    expect(canonicalLanguage("output")).toBeUndefined();
    expect(canonicalLanguage("text")).toBeUndefined();
    expect(canonicalLanguage("")).toBeUndefined();
    expect(canonicalLanguage(undefined)).toBeUndefined();
  });
});

describe("sandbox ids", () => {
  it("maps canonical names to SandboxFusion ids and back", () => {
    expect(sandboxLanguageId("javascript")).toBe("nodejs");
    expect(sandboxLanguageId("shell")).toBe("bash");
    expect(sandboxLanguageId("r")).toBe("R");
    expect(sandboxLanguageId("python")).toBe("python");
    expect(sandboxLanguageId("html")).toBeUndefined();
    expect(languageFromSandboxId("nodejs")).toBe("javascript");
    expect(languageFromSandboxId("bash")).toBe("shell");
    expect(languageFromSandboxId("R")).toBe("r");
    expect(languageFromSandboxId("cpp")).toBe("cpp");
  });

  it("knows which names are programs", () => {
    expect(isProgrammingLanguage("json")).toBe(false);
    expect(isProgrammingLanguage("go")).toBe(true);
  });
});
