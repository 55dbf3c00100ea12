// The end-to-end benchmark's LLM answers (bench/e2e/answers.ts) do what its figures rely on: the
// filter's own parser reads every score, each prompt passes the paper's share of queries, the weak
// model's code is Python the dialogue stages run, and the error-inducing prompt gets code that does
// not parse while the answer to its traceback is the same program fixed.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { benchAnswer, PASS_FIRST, PASS_SECOND } from "../../bench/e2e/answers.js";
import { generateCorpus } from "../../bench/ingest/corpus.js";
import { extractCodeBlocks } from "../../pipeline/code/index.js";
import { loadPrompt } from "../../pipeline/llm/prompts.js";
import { codeOfAnswer } from "../../stages/dialogue-kit/code.js";
import { parseComplexityScore } from "../../stages/filter/score-parser.js";
import { askedLanguage } from "../../stages/validate/asks.js";
import type { ReceivedRequest } from "../support/llm-server.js";
import { tempDir } from "../support/temp-dir.js";

const request = (model: string, messages: { role: string; content: string }[]): ReceivedRequest => ({
  n: 1,
  at: 0,
  key: "k",
  body: { model, messages },
  authorization: undefined,
});

const text = (reply: ReturnType<typeof benchAnswer>) => (typeof reply === "string" ? reply : reply.content);

describe("bench e2e answers", () => {
  it.each([
    ["complexity-1", PASS_FIRST],
    ["complexity-2", PASS_SECOND],
  ])("%s: every score parses and the paper's share scores 4-5", (prompt, share) => {
    const template = loadPrompt(prompt);
    const n = 4000;
    let passed = 0;
    for (let i = 0; i < n; i++) {
      const content = template.render({
        query: `Write a function number ${i} that sorts a list of ${i % 13} items`,
      });
      const parsed = parseComplexityScore(
        text(benchAnswer(request("bench-scorer", [{ role: "user", content }]))),
      );
      expect(parsed?.score).toBeGreaterThanOrEqual(1);
      if (parsed!.score >= 4) passed++;
    }
    expect(Math.abs(passed / n - share)).toBeLessThan(0.03);
  });

  it("the two prompts score a query independently", () => {
    const scores = (prompt: string) =>
      Array.from(
        { length: 200 },
        (_, i) =>
          parseComplexityScore(
            text(
              benchAnswer(
                request("bench-scorer", [
                  { role: "user", content: loadPrompt(prompt).render({ query: `task ${i}` }) },
                ]),
              ),
            ),
          )!.score,
      );
    expect(scores("complexity-1")).not.toEqual(scores("complexity-2"));
  });

  it("the weak model answers with Python code", () => {
    const answer = text(
      benchAnswer(
        request("bench-weak", [
          { role: "system", content: loadPrompt("simulate-interpreter").render({}) },
          { role: "user", content: "Add up the numbers below 40." },
        ]),
      ),
    );
    expect(codeOfAnswer(answer, "python")).toMatchObject({ lang: "python" });
  });

  it("the error-inducing prompt gets unbalanced code, and its traceback the program fixed", () => {
    const asked = [
      { role: "system", content: loadPrompt("correct-errors").render({}) },
      { role: "user", content: "Add up the numbers below 40." },
    ];
    const broken = codeOfAnswer(text(benchAnswer(request("bench-strong", asked))), "python")!.code;
    const count = (code: string, c: string) => code.split(c).length - 1;
    expect(count(broken, "(")).toBeGreaterThan(count(broken, ")"));
    const fixed = codeOfAnswer(
      text(
        benchAnswer(
          request("bench-strong", [
            { role: "system", content: loadPrompt("simulate-interpreter").render({}) },
            { role: "user", content: "Execution result: \nSyntaxError: '(' was never closed" },
          ]),
        ),
      ),
      "python",
    )!.code;
    expect(count(fixed, "(")).toBe(count(fixed, ")"));
  });

  it("answers two results that printed different things differently (validate drops a repeated turn)", () => {
    const answer = (printed: string) =>
      text(
        benchAnswer(
          request("bench-strong", [
            { role: "system", content: loadPrompt("simulate-interpreter").render({}) },
            { role: "user", content: `Execution result: \n${printed}` },
          ]),
        ),
      );
    expect(answer("496")).not.toBe(answer("992"));
  });

  it("the corpus's queries name no language and its Python compiles (validate runs pack's dialogues)", async () => {
    const dir = tempDir("cf-bench-corpus-");
    const sources = await generateCorpus(dir, 0.002);
    let python = 0;
    for (const { plain } of sources) {
      for (const line of readFileSync(plain, "utf8").trim().split("\n")) {
        const row = JSON.parse(line);
        const [query, answer] = (row.conversations?.map((turn: { value: string }) => turn.value) ?? [
          row.problem ?? row.instruction,
          row.solution ?? row.response ?? row.output,
        ]) as [string, string];
        expect(askedLanguage(query), query).toBeUndefined();
        for (const block of extractCodeBlocks(answer)) {
          if (block.lang !== "python") continue;
          python++;
          execFileSync("python3", ["-c", "import sys; compile(sys.stdin.read(), 'block', 'exec')"], {
            input: block.code,
          });
        }
      }
    }
    expect(python).toBeGreaterThan(10);
  });

  it("the reviewer answers the feedback JSON the simulate stage reads", () => {
    const reply = text(
      benchAnswer(
        request("bench-strong", [
          { role: "system", content: loadPrompt("simulate-feedback").render({}) },
          { role: "user", content: "the dialogue" },
        ]),
      ),
    );
    expect(Object.keys(JSON.parse(reply))).toEqual(["satisfied", "not_satisfied", "feedback"]);
  });
});
