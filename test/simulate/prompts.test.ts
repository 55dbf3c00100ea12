// The paper's prompts for simulate and correct, kept verbatim: pinned by their SHA-256, and compared
// with seed 003's text where the seed is at hand.
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { loadPrompt } from "../../pipeline/llm/prompts.js";
import { paperSeed } from "../support/required.js";

const seed = paperSeed();
const sha = (text: string) => createHash("sha256").update(text).digest("hex");

describe("simulate and correct prompts", () => {
  it("keeps the paper's text byte for byte", () => {
    expect(sha(loadPrompt("simulate-interpreter").text)).toBe(
      "3f1f8ac62f071bb09d846b6af9c1313dca0ba6afa3249eacfa8b21e93966bbf7",
    );
    expect(sha(loadPrompt("simulate-feedback").text)).toBe(
      "d185b56043fffe60e536d3583819c8cdc9519df6d566297bdd138b4b99bfe496",
    );
    expect(sha(loadPrompt("correct-errors").text)).toBe(
      "9f6d30625c9bf651b9aa930c4d2aa99e1262b45f67cfde2c859b1ec5fe8a0c52",
    );
  });

  it("has no placeholders: the JSON example of the feedback prompt is sent as written", () => {
    for (const name of ["simulate-interpreter", "simulate-feedback", "correct-errors"]) {
      const prompt = loadPrompt(name);
      expect(prompt.placeholders).toEqual([]);
      expect(prompt.render({})).toBe(prompt.text);
    }
    expect(loadPrompt("simulate-feedback").text).toContain('"not_satisfied": "The points');
  });

  it.runIf(seed !== undefined)("matches the seed's text where the seed is at hand", () => {
    const blocks = [...seed!.matchAll(/```markdown\n([\s\S]*?)\n```/g)].map((m) => m[1]!);
    const block = (start: string) => blocks.filter((b) => b.startsWith(start));
    expect(block("You are an AI code interpreter. \nYour goal is to help users")).toEqual([
      loadPrompt("simulate-interpreter").text,
    ]);
    expect(block("You are a user who gives feedback")).toEqual([loadPrompt("simulate-feedback").text]);
    expect(block("You are an AI code interpreter. \nYour goal is to generate and execute")).toEqual([
      loadPrompt("correct-errors").text,
    ]);
  });
});
