import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../pipeline/errors.js";
import { loadPrompt, parsePrompt } from "../../pipeline/llm/prompts.js";
import { paperSeed } from "../support/required.js";

const seed = paperSeed();

describe("prompt templates", () => {
  it("loads both Query Filtering prompts with a {query} placeholder", () => {
    for (const name of ["complexity-1", "complexity-2"]) {
      const prompt = loadPrompt(name);
      expect(prompt.placeholders).toEqual(["query"]);
      expect(prompt.text.startsWith("Rate the following code queries on a scale of 1 to 5")).toBe(true);
      expect(prompt.text.endsWith("Please give the score first then explain why")).toBe(true);
    }
    expect(loadPrompt("complexity-1").text).toContain("5 Points - Very Difficult:");
    expect(loadPrompt("complexity-2").text).toContain("5 Points - Expert Level:");
  });

  it("keeps the paper's text byte for byte (SHA-256 of the two Query Filtering prompts in seed 003)", () => {
    const sha = (text: string) => createHash("sha256").update(text).digest("hex");
    expect(sha(loadPrompt("complexity-1").text)).toBe(
      "2c7a6d1472915e9aa490d125a14feeaef4c7c02ddf57d1bdc106e59664812606",
    );
    expect(sha(loadPrompt("complexity-2").text)).toBe(
      "4ac81083b0ecbde93bc66f430bc86508e3ba4b6dd2279820036fbf496b2fc905",
    );
  });

  // Where the seed is checked out beside the repo: the texts themselves, for a readable diff.
  it.runIf(seed !== undefined)("matches the seed's text where the seed is at hand", () => {
    const blocks = [...seed!.matchAll(/Query Filtering Prompt 1\n```markdown\n([\s\S]*?)\n```/g)].map(
      (m) => m[1],
    );
    expect(blocks).toHaveLength(2);
    expect(loadPrompt("complexity-1").text).toBe(blocks[0]);
    expect(loadPrompt("complexity-2").text).toBe(blocks[1]);
  });

  it("renders in one pass, leaving a query's own braces alone", () => {
    const prompt = parsePrompt("t", "t.md", "Query: [{query}]\n");
    expect(prompt.render({ query: "print({query}) and {x}" })).toBe("Query: [print({query}) and {x}]");
    expect(parsePrompt("t", "t.md", "{query} {constructor}").render({ query: "q" })).toBe("q {constructor}");
  });

  it("explains where prompts are when one is missing", () => {
    expect(() => loadPrompt("complexity-9")).toThrow(ConfigError);
    expect(() => loadPrompt("complexity-9")).toThrow(/prompts/);
  });
});
