// The paper's LeetCode prompt is kept verbatim (trailing spaces included) and filled in one pass.
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { loadPrompt } from "../../pipeline/llm/prompts.js";
import {
  assistantAnswer,
  cleanText,
  fenced,
  renderTextPrompt,
  TEXT_PROMPT,
} from "../../stages/leetcode/texts.js";
import { paperSeed } from "../support/required.js";

const seed = paperSeed();

describe("the LeetCode follow-up prompt", () => {
  it("keeps the paper's text byte for byte (SHA-256 of the block in seed 003)", () => {
    const text = loadPrompt(TEXT_PROMPT).text;
    expect(createHash("sha256").update(text).digest("hex")).toBe(
      "5b5ff8893eca73743a39ba4f425d9b77b80248421948c3f0e06ae1b744eba5ec",
    );
    expect(text.startsWith("Here is a list containing a series of dialogues")).toBe(true);
    expect(text.endsWith("@@Code: \n{code}")).toBe(true);
  });

  it.runIf(seed !== undefined)("matches the seed's text where the seed is at hand", () => {
    const block = /<!-- LeetCode_Follow-up_Question -->[\s\S]*?```markdown\n([\s\S]*?)\n```/.exec(seed!)?.[1];
    expect(loadPrompt(TEXT_PROMPT).text).toBe(block);
  });

  it("fills its three slots once, leaving braces in the problem or the code alone", () => {
    const prompt = renderTextPrompt(
      [
        { role: "user", content: "first {code}" },
        { role: "assistant", content: "answer" },
      ],
      "latest {recent problem}",
      "print('{previous dialogues}')",
    );
    expect(prompt).toContain(
      '@@Previous Dialogues \n[\n  {\n    "role": "user",\n    "content": "first {code}"',
    );
    expect(prompt).toContain("@@Recent Problem: \nlatest {recent problem} \n");
    expect(prompt.endsWith("@@Code: \nprint('{previous dialogues}')")).toBe(true);
    expect(renderTextPrompt([], "p", "c")).toContain("@@Previous Dialogues \n[] \n");
  });

  it("keeps only the model's text: code it adds anyway and an echoed marker are cut", () => {
    expect(cleanText("The following code uses a hash map.\n\n```python\nx = 1\n```\nmore")).toBe(
      "The following code uses a hash map.",
    );
    expect(cleanText("My solution sorts first.\n@@Code:")).toBe("My solution sorts first.");
    expect(cleanText("```python\nx\n```")).toBe("");
  });

  it("puts the code after the text unchanged, in a fence it cannot close", () => {
    expect(assistantAnswer("Text.", "x = 1\n", "python")).toBe("Text.\n\n```python\nx = 1\n```");
    expect(fenced("s = '```'", "python")).toBe("````python\ns = '```'\n````");
  });
});
