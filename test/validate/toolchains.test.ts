// The causes validate reads from a failure, checked against what the real toolchains in the sandbox
// print: a third-party package missing in JavaScript, Go, Rust and C++ is `missing-package`, not a
// failure of the code; harnesses for bare Go, Rust and C# definitions compile; a real bug in them fails.
import { afterAll, describe, expect, it } from "vitest";
import type { LanguageName } from "../../pipeline/code/index.js";
import { runBlock } from "../../pipeline/execution/index.js";
import { EmbeddedSandbox } from "../../pipeline/sandbox/index.js";
import { harnessFor } from "../../stages/validate/harness.js";
import { type RunProgram, validateDialogue } from "../../stages/validate/validate-dialogue.js";
import { testConfig } from "../sandbox/helpers.js";
import { fence, turns } from "./fixtures.js";

const sandbox = new EmbeddedSandbox(testConfig({ compile_timeout_s: 120 }));
afterAll(() => sandbox.close());

const run: RunProgram = (code: string, lang: LanguageName, previous: readonly string[]) =>
  runBlock(sandbox, code, lang, { previous, runTimeoutS: 5, compileTimeoutS: 120 });

const one = (lang: string, code: string) =>
  validateDialogue({ messages: turns(["Write it.", fence(lang, code)]) }, run);

describe("validate: what real toolchains say", () => {
  it("a missing third-party package is not runnable, in every language's words", async () => {
    const cases: [string, string, string][] = [
      ["javascript", "const express = require('express');\nexpress().get('/', () => {});", "express"],
      [
        "go",
        'package main\n\nimport "github.com/gorilla/mux"\n\nfunc main() { _ = mux.NewRouter() }',
        "gorilla/mux",
      ],
      [
        "rust",
        'use rand::Rng;\n\nfn main() {\n    let n: u8 = rand::thread_rng().gen();\n    println!("{}", n);\n}',
        "rand",
      ],
      ["cpp", "#include <nlohmann/json.hpp>\nint main() { return 0; }", "nlohmann/json.hpp"],
    ];
    for (const [lang, code, name] of cases) {
      const v = await one(lang, code);
      expect(v, `${lang}: ${JSON.stringify(v)}`).toMatchObject({
        outcome: "not-runnable",
        reason: "missing-package",
      });
      expect(v.error).toContain(name);
    }
  });

  it("bare Go, Rust and C# definitions compile in their harness; a type error in them fails", async () => {
    const good: [string, string][] = [
      [
        "go",
        "func Sum(xs []int) int {\n\ttotal := 0\n\tfor _, x := range xs {\n\t\ttotal += x\n\t}\n\treturn total\n}",
      ],
      ["rust", "fn gcd(a: u64, b: u64) -> u64 {\n    if b == 0 { a } else { gcd(b, a % b) }\n}"],
      [
        "csharp",
        "public static int Twice(int x) {\n    var list = new List<int> { x, x };\n    return list.Sum();\n}",
      ],
    ];
    for (const [lang, code] of good) {
      const v = await one(lang, code);
      expect(v, `${lang}: ${JSON.stringify(v)}`).toMatchObject({ outcome: "passed" });
      expect(v.blocks[0]!.harness).toBe("definitions");
    }
    const broken = await one("go", 'func Half(x int) int {\n\treturn x / "2"\n}');
    expect(broken.outcome).toBe("failed");
    expect(broken.error).toMatch(/mismatched types|cannot convert|invalid operation/);
  });
});

describe("harnessFor", () => {
  it("leaves whole programs alone and surrounds bare definitions without editing them", () => {
    const script = 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println(1) }';
    expect(harnessFor(script, "go")).toEqual({ code: script, harness: "as-is" });
    const method = "public int half(int x) { return x / 2; }";
    const java = harnessFor(method, "java");
    expect(java.harness).toBe("definitions");
    expect(java.code).toContain(`class Solution {\n${method}\n}`);
    expect(java.code).toContain("public static void main(String[] args) {}");
    const library = harnessFor("package geometry\n\nfunc Area(r float64) float64 { return 3 * r * r }", "go");
    expect(library.code).toMatch(/^package main\n/);
    expect(library.code).toContain("func main() {}");
    expect(harnessFor("echo 'hi';", "php").code).toBe("<?php\necho 'hi';\n");
  });
});
