// `pnpm pipeline eval ...` end to end, in process: files in, files and a summary table out.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import yargs from "yargs";
import { evalCommand } from "../../pipeline/cli/eval.js";
import type { PredictionResult } from "../../pipeline/eval/types.js";
import { ALL_PREDICTIONS, predictionsJsonl } from "../fixtures/eval/predictions.js";
import { tempDir } from "../support/temp-dir.js";

const QUESTIONS = join(import.meta.dirname, "../fixtures/eval/questions.jsonl");

const dir = tempDir("eval-cli-");
/** Runs the eval command with `args`; returns what it printed on stdout. */
async function cli(...args: string[]): Promise<string> {
  let printed = "";
  const write = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
    printed += String(chunk);
    return true;
  });
  const quiet = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
  try {
    await yargs(["eval", ...args])
      .command(evalCommand)
      .strict()
      .fail(false)
      .parseAsync();
  } finally {
    write.mockRestore();
    quiet.mockRestore();
  }
  return printed;
}

/** `eval autoeval` or `eval oj`: judges the predictions file against the dataset into `out`. */
const judge = (
  command: "autoeval" | "oj",
  dataset: string,
  predictions: string,
  out: string,
  ...options: string[]
) => cli(command, "--dataset", dataset, "--predictions", predictions, "--out", out, ...options);

const readLines = (path: string) =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line));

describe("eval generate and eval run", () => {
  it("generates programs and evaluates predictions into results.jsonl and metrics.json", async () => {
    const tests = join(dir, "tests");
    const generated = await cli(
      "generate",
      "--questions",
      QUESTIONS,
      "--out",
      tests,
      "--languages",
      "Python,rb",
    );
    expect(generated).toContain("22 programs for 11 questions");
    expect(generated).toMatch(/^language\s+programs\s+not generated\s+first reason$/m);
    expect(generated).toMatch(/^ruby\s+11\s+0\s*$/m);
    expect(readLines(join(tests, "python.jsonl"))).toHaveLength(11);
    expect(readLines(join(tests, "failures.jsonl"))).toEqual([]);

    const predictions = join(dir, "predictions.jsonl");
    writeFileSync(predictions, predictionsJsonl(ALL_PREDICTIONS.filter((p) => /^py/i.test(p.language))));
    const out = join(dir, "run");
    // pass@k and workers come from the config's eval: section; --set overrides one of its keys.
    const config = join(dir, "eval.yaml");
    writeFileSync(config, "eval:\n  ks: [2, 1, 2]\n  workers: 1\n  run_timeout_s: 5\n");
    const printed = await cli(
      "run",
      "--predictions",
      predictions,
      "--tests",
      tests,
      "--out",
      out,
      "--config",
      config,
      "--set",
      "eval.workers=2",
    );
    const results = readLines(join(out, "results.jsonl")) as PredictionResult[];
    expect(results).toHaveLength(14);
    expect(results.filter((r) => r.outcome === "Passed")).toHaveLength(11);
    const metrics = JSON.parse(readFileSync(join(out, "metrics.json"), "utf8"));
    expect(metrics.ks).toEqual([1, 2]);
    expect(metrics.settings).toEqual({ workers: 2, runTimeoutS: 5, recordCommands: true });
    expect(results[0]?.commands).toEqual([
      expect.objectContaining({ step: "run", command: ["/usr/bin/python3", "-u", "main.py"] }),
    ]);
    expect(metrics.overall.pass_at_k["pass@2"]).toEqual({
      value: expect.closeTo((2 / 3 + 1) / 2, 12),
      questions: 2,
    });
    expect(metrics.unmatched).toEqual([]);
    expect(printed).toMatch(/^language\s+questions\s+predictions\s+Passed\s+Failed Tests/m);
    expect(printed).toMatch(/^overall\s+11\s+14\s+11\s+2\s+0\s+1\s+0\s+/m);
  });

  it("names the config key that is wrong", async () => {
    const config = join(dir, "bad.yaml");
    writeFileSync(config, "eval:\n  ks: [0]\n");
    await expect(
      cli("run", "--predictions", "p", "--tests", "t", "--out", join(dir, "x"), "--config", config),
    ).rejects.toThrow(/eval\.ks\.0 \(line 2\)/);
  });

  it("refuses a predictions file that repeats an id, naming the line", async () => {
    const predictions = join(dir, "duplicate.jsonl");
    const line = JSON.stringify({ qid: "mean", id: "a", language: "python", code: "" });
    writeFileSync(predictions, `${line}\n${line}\n`);
    await expect(
      cli("run", "--predictions", predictions, "--tests", join(dir, "tests"), "--out", join(dir, "x")),
    ).rejects.toThrow(`${predictions}:2: prediction id "a" for question mean in python repeats line 1`);
  });
});

describe("eval autoeval and eval oj through the sandbox", () => {
  const jsonl = (name: string, rows: unknown[]) => {
    const path = join(dir, name);
    writeFileSync(path, rows.map((r) => `${JSON.stringify(r)}\n`).join(""));
    return path;
  };

  it("runs AutoEval rows: appended tests, #<INSERT> with an asset, Go, and an unknown execution language", async () => {
    const dataset = jsonl("autoeval.jsonl", [
      {
        id: "add",
        content: "",
        test: { code: "assert add(1, 2) == 3\nassert add(-1, 1) == 0\n" },
        labels: { programming_language: "python" },
      },
      {
        id: "file",
        content: "",
        test: {
          code: "#<INSERT>\nwith open('data.txt') as f:\n    assert plus_one(int(f.read())) == 42\n",
          asset: { "data.txt": Buffer.from("41\n").toString("base64") },
        },
        labels: JSON.stringify({ programming_language: "python", execution_language: "python" }),
      },
      {
        id: "double",
        content: "",
        test: {
          code: 'package main\nimport "fmt"\nfunc main() {\n\tif Double(21) != 42 {\n\t\tpanic("wrong")\n\t}\n\tfmt.Println("ok")\n}\n',
        },
        labels: { programming_language: "go" },
      },
      {
        id: "triple",
        content: "",
        test: { code: "if (triple(2) !== 6) throw new Error('wrong');\n" },
        labels: { programming_language: "javascript", execution_language: "typescript" },
      },
      {
        id: "pytest",
        content: "",
        test: { code: "def test_x():\n    assert x() == 1\n" },
        labels: { programming_language: "python", execution_language: "no_such_runtime" },
      },
    ]);
    const answers = jsonl("autoeval-answers.jsonl", [
      {
        id: "add",
        completion:
          'Here:\n```python\ndef add(a, b):\n    return a + b\n\nif __name__ == "__main__":\n    print(add(2, 2))\n```',
      },
      { id: "add", code: "def add(a, b):\n    return a - b\n" },
      { id: "file", completion: "```py\ndef plus_one(n):\n    return n + 1\n```" },
      {
        id: "double",
        completion:
          '```go\npackage main\n\nimport "strings"\n\nfunc Double(x int) int {\n\t_ = strings.TrimSpace("")\n\treturn x * 2\n}\n```',
      },
      { id: "triple", completion: "```js\nfunction triple(x) {\n  return 3 * x;\n}\n```" },
      { id: "pytest", code: "def x():\n    return 1\n" },
      { id: "missing", code: "" },
    ]);
    const out = join(dir, "autoeval");
    await judge("autoeval", dataset, answers, out, "--compile-timeout", "60");
    const results = readLines(join(out, "results.jsonl")) as PredictionResult[];
    expect(results.map((r) => [r.qid, r.id, r.outcome])).toEqual([
      ["add", "0", "Passed"],
      ["add", "1", "Failed Tests"],
      ["file", "0", "Passed"],
      ["double", "0", "Passed"],
      ["triple", "0", "Passed"],
      ["pytest", "0", "Had Error"],
    ]);
    // JavaScript answers, run as TypeScript: transpiled by esbuild, then node.
    expect(results[4]).toMatchObject({ language: "javascript", main_removed: false });
    expect(results[4]?.commands.map((c) => c.command?.[0])).toEqual(["esbuild", "node"]);
    expect(results[0]?.main_removed).toBe(true);
    expect(results[5]?.reason).toMatch(/^sandbox error: /);
    const metrics = JSON.parse(readFileSync(join(out, "metrics.json"), "utf8"));
    expect(metrics.type).toBe("AutoEval");
    expect(metrics.unmatched).toEqual([{ qid: "missing", id: "0" }]);
    expect(metrics.by_language.python.pass_at_k["pass@1"]).toEqual({
      value: expect.closeTo((1 / 2 + 1 + 0) / 3, 12),
      questions: 3,
    });
  });

  it("judges CommonOJ answers by SandboxFusion's rules", async () => {
    const dataset = jsonl("oj.jsonl", [
      {
        id: "sum",
        content: "",
        test: [
          { input: { stdin: "1 2\n" }, output: { stdout: "3\n" } },
          { input: { stdin: "10 -3\n" }, output: { stdout: "7" } },
        ],
        labels: { programming_language: "python" },
      },
      {
        id: "yes",
        content: "",
        test: JSON.stringify([{ input: { stdin: "" }, output: { stdout: "YES" } }]),
        labels: {},
      },
    ]);
    const python = [
      { id: "sum", completion: "```python\na, b = map(int, input().split())\nprint(a + b)\n```" },
      { id: "sum", code: "a, b = map(int, input().split())\nprint(a - b)\n" },
      { id: "sum", code: "a, b = map(int, input().split())\nprint(f'{a + b + 0.00001:.5f}')\n" },
      { id: "sum", code: "raise SystemExit(3)\n" },
      { id: "yes", language: "python", code: "print('yes')\n" },
    ];
    const cpp = {
      id: "sum",
      language: "cpp",
      code: "#include <iostream>\nint main() { long a, b; std::cin >> a >> b; std::cout << a + b << std::endl; }\n",
    };
    const answers = jsonl("oj-answers.jsonl", [...python.slice(0, 4), cpp, python[4]]);
    const out = join(dir, "oj");
    await judge("oj", dataset, answers, out, "--compile-timeout", "60", "--k", "1,5");
    const results = readLines(join(out, "results.jsonl")) as PredictionResult[];
    expect(results.map((r) => [r.qid, r.id, r.language, r.outcome, r.test_results])).toEqual([
      ["sum", "0", "python", "Passed", { "0": "PASSED", "1": "PASSED" }],
      ["sum", "1", "python", "Failed Tests", { "0": "FAILED", "1": "SKIPPED" }],
      ["sum", "2", "python", "Passed", { "0": "PASSED", "1": "PASSED" }],
      ["sum", "3", "python", "Had Runtime Error", { "0": "RUNTIME_ERROR", "1": "SKIPPED" }],
      ["sum", "4", "cpp", "Passed", { "0": "PASSED", "1": "PASSED" }],
      ["yes", "0", "python", "Passed", { "0": "PASSED" }],
    ]);

    // The same rules made strict; the C++ answer (compiled once per case) adds nothing here.
    const strict = join(dir, "oj-strict");
    await judge(
      "oj",
      dataset,
      jsonl("oj-answers-python.jsonl", python),
      strict,
      "--case-sensitive",
      "--all-cases",
    );
    const strictResults = readLines(join(strict, "results.jsonl")) as PredictionResult[];
    expect(strictResults.map((r) => r.outcome)).toEqual([
      "Passed",
      "Failed Tests",
      "Passed",
      "Had Runtime Error",
      "Failed Tests",
    ]);
    expect(strictResults[1]?.test_results).toEqual({ "0": "FAILED", "1": "FAILED" });
  });
});
