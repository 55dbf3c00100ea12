// The paper's evaluation prompts are kept byte for byte (seed 003), and rendered as docs/eval.md
// says: the seed's “‘ fences become ``` (or stay, with fence: verbatim), placeholders with spaces
// are filled in one pass, and the no-canonical guidance prompt never carries the solution.
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  fillPlaceholders,
  guidancePrompt,
  PROMPT_NAMES,
  SEED_FENCE,
  taskPrompt,
} from "../../../pipeline/eval/model/prompts.js";
import { loadPrompt } from "../../../pipeline/llm/prompts.js";
import { paperSeed } from "../../support/required.js";

const seed = paperSeed();

const sha = (text: string) => createHash("sha256").update(text).digest("hex");

describe("the paper's evaluation prompts", () => {
  it("keeps the four texts byte for byte (SHA-256 of the seed's blocks)", () => {
    expect(sha(loadPrompt(PROMPT_NAMES.humaneval).text)).toBe(
      "2204b3386b59b32f9293f0e77314d4bcde1ff2d37c79a10a9cbc168c289fc1cb",
    );
    expect(sha(loadPrompt(PROMPT_NAMES.mbpp).text)).toBe(
      "8463166b6ffd7bb838a8e3e052a843586872c188567299ae79c5b327a1651156",
    );
    expect(sha(loadPrompt(PROMPT_NAMES.oracle).text)).toBe(
      "73d8eea9fe593779e26137d4c547a34653cd4e212298dd3f40b2a99948fa444b",
    );
    expect(sha(loadPrompt(PROMPT_NAMES.human).text)).toBe(
      "71881458ef04edff7eaa6e347090e5b2dead9a2f124d710432e6004ff5cff71a",
    );
  });

  it.runIf(seed !== undefined)("matches the seed's text where the seed is at hand", () => {
    const block = (title: string) => {
      const at = seed!.indexOf(`${title}\n\`\`\`markdown\n`);
      expect(at).toBeGreaterThan(0);
      const start = at + title.length + "\n```markdown\n".length;
      return seed!.slice(start, seed!.indexOf("\n```", start));
    };
    expect(loadPrompt(PROMPT_NAMES.humaneval).text).toBe(block("Prompt for HumanEval and HumanEval+"));
    expect(loadPrompt(PROMPT_NAMES.mbpp).text).toBe(block("Prompt for MBPP and MBPP+"));
    expect(loadPrompt(PROMPT_NAMES.oracle).text).toBe(
      block("Prompt for GPT models mimicking human feedback with canonical solution"),
    );
    expect(loadPrompt(PROMPT_NAMES.human).text).toBe(
      block("Prompt for GPT models mimicking human feedback without canonical solution"),
    );
  });

  it("holds the seed's typographic fence, which is sent as ``` by default and as it is on request", () => {
    const raw = loadPrompt(PROMPT_NAMES.humaneval).text;
    expect(raw).toContain(`${SEED_FENCE}{language} \n{original prompt} \n${SEED_FENCE} \n`);
    const sent = taskPrompt("humaneval", "def f():\n    pass\n");
    expect(sent).not.toContain(SEED_FENCE);
    expect(sent).toContain(
      "Here is the given code to do completion: \n```python \ndef f():\n    pass \n``` \n",
    );
    expect(sent).toContain(
      "This code block should be in the following format: \n```python \n# Your codes here \n``` \n",
    );
    expect(sent.endsWith("@@ Response")).toBe(true);
    const verbatim = taskPrompt("humaneval+", "def f():\n    pass\n", "verbatim");
    expect(verbatim).toContain(`${SEED_FENCE}python \ndef f():`);
  });

  it("uses the MBPP prompt for MBPP and MBPP+, with the seed's own line break kept", () => {
    for (const benchmark of ["mbpp", "mbpp+"] as const) {
      const sent = taskPrompt(benchmark, "Write a function.\nassert f(1) == 2");
      expect(sent).toContain(
        "Here is the given problem and test examples: \nWrite a function.\nassert f(1) == 2 \n",
      );
      expect(sent).toContain("Please use the python programming language to solve this problem. \n");
      expect(sent).toContain("Please return all completed codes in one code block. T\nhis code block");
    }
  });

  it("fills placeholders in one pass: a task's own braces are left alone", () => {
    const sent = taskPrompt("humaneval", "def f():\n    return '{language} {original prompt}'\n");
    expect(sent).toContain("return '{language} {original prompt}'");
    expect(fillPlaceholders("{language} {unknown} {language}", { language: "python" })).toBe(
      "python {unknown} python",
    );
  });

  it("gives the oracle the canonical solution and human feedback no trace of it", () => {
    const values = {
      originalPrompt: "Write strip_char.",
      code: "def strip_char(s, ch):\n    return s",
      executionResult: "Input: strip_char('banana', 'a')\nExpected output: 'bnn'\nActual output: 'banana'",
      canonical: "def strip_char(s, ch):\n    return s.replace(ch, 'SECRET')",
    };
    const oracle = guidancePrompt("oracle", values);
    expect(oracle).toContain(
      "@@Canonical Solution \ndef strip_char(s, ch):\n    return s.replace(ch, 'SECRET') \n\n@@Guidance",
    );
    expect(oracle).toContain("@@Execution Result \nInput: strip_char('banana', 'a')");
    expect(oracle).toContain("@@Existing Code \ndef strip_char(s, ch):\n    return s \n");
    const human = guidancePrompt("human", values);
    expect(human).not.toContain("SECRET");
    expect(human).not.toContain("Canonical Solution");
    expect(human).not.toContain("{canonical solution}");
    expect(human).toContain(
      "@@Execution Result \nInput: strip_char('banana', 'a')\nExpected output: 'bnn'\nActual output: 'banana' \n\n@@Guidance",
    );
    expect(human.startsWith("You are tasked with providing guidance")).toBe(true);
  });
});
