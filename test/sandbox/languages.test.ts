// Every language runs a small stdin-reading program end to end in the embedded sandbox, and the
// status rules match SandboxFusion's for compile errors, runtime errors and timeouts.
import { afterAll, describe, expect, it } from "vitest";
import { EmbeddedSandbox, LANGUAGE_SPECS, listLanguages } from "../../pipeline/sandbox/index.js";
import { versionOf } from "../../pipeline/sandbox/toolchains.js";
import { probeIsolationMode, testConfig } from "./helpers.js";

/** Each program reads one word from stdin and prints it reversed. */
const REVERSE_PROGRAMS: Record<string, string> = {
  python: "import numpy, pandas, scipy, sympy\nprint(input()[::-1])",
  nodejs: "const s = require('fs').readFileSync(0, 'utf8').trim(); console.log([...s].reverse().join(''));",
  typescript:
    "const s: string = require('fs').readFileSync(0, 'utf8'); const rev = (x: string): string => [...x.trim()].reverse().join(''); console.log(rev(s));",
  c: '#include <stdio.h>\n#include <string.h>\nint main(void){char b[64]; scanf("%63s", b); for (int i = strlen(b) - 1; i >= 0; i--) putchar(b[i]); putchar(10); return 0;}',
  cpp: "#include <algorithm>\n#include <iostream>\n#include <string>\nint main(){std::string s; std::cin >> s; std::reverse(s.begin(), s.end()); std::cout << s << '\\n';}",
  java: "import java.util.*;\npublic class Solution { public static void main(String[] a) { System.out.println(new StringBuilder(new Scanner(System.in).next()).reverse()); } }",
  go: 'package main\nimport "fmt"\nfunc main() { var s string; fmt.Scan(&s); r := []rune(s); for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 { r[i], r[j] = r[j], r[i] }; fmt.Println(string(r)) }',
  rust: 'use std::io::Read;\nfn main() { let mut s = String::new(); std::io::stdin().read_to_string(&mut s).unwrap(); println!("{}", s.trim().chars().rev().collect::<String>()); }',
  csharp:
    "using System;\nclass P { static void Main() { var a = Console.ReadLine().Trim().ToCharArray(); Array.Reverse(a); Console.WriteLine(new string(a)); } }",
  php: '<?php echo strrev(trim(fgets(STDIN))), "\\n";',
  ruby: "puts gets.strip.reverse",
  bash: 'read s; echo "$s" | rev',
  perl: 'my $s = <STDIN>; chomp $s; print scalar reverse($s), "\\n";',
  lua: "print(io.read('l'):reverse())",
  R: "s <- readLines(file('stdin'), n = 1); cat(paste(rev(strsplit(s, '')[[1]]), collapse = ''), '\\n', sep = '')",
  scala:
    "object Main { def main(args: Array[String]): Unit = println(scala.io.StdIn.readLine().trim.reverse) }",
  D_ut: "import std.conv, std.range, std.stdio, std.string;\nvoid main() { writeln(readln().strip.retro.to!string); }",
  kotlin_script: "println(readLine()!!.trim().reversed())",
  racket: "#lang racket\n(displayln (list->string (reverse (string->list (string-trim (read-line))))))",
};

/**
 * Test-runner languages (SandboxFusion's pytest, junit, go_test, jest): a module whose tests pass, one
 * whose test fails, and what the runner reports on `stream` (stdout, or stderr for jest).
 */
const TEST_MODULES: Record<
  string,
  { passing: string; failing: string; passed: RegExp; failed: RegExp; stream?: "stderr" }
> = {
  pytest: {
    passing:
      "import numpy as np\n\ndef mean(xs):\n    return float(np.mean(xs))\n\ndef test_mean():\n    assert mean([1, 2, 3]) == 2.0\n\ndef test_empty_list():\n    assert mean([5]) == 5.0\n",
    failing: "def test_off_by_one():\n    assert sum(range(4)) == 10\n",
    passed: /2 passed/,
    failed: /1 failed/,
  },
  junit: {
    passing:
      "import org.junit.jupiter.api.Test;\nimport static org.junit.jupiter.api.Assertions.*;\n\npublic class CalcTest {\n  static int add(int a, int b) { return a + b; }\n  @Test void adds() { assertEquals(5, add(2, 3)); }\n  @Test void addsNegative() { assertEquals(0, add(-1, 1)); }\n}\n",
    failing:
      "import org.junit.jupiter.api.Test;\nimport static org.junit.jupiter.api.Assertions.*;\n\npublic class BadTest {\n  @Test void wrong() { assertEquals(6, 2 + 3); }\n}\n",
    passed: /2 tests successful/,
    failed: /wrong\(\) ✘ expected: <6> but was: <5>/,
  },
  go_test: {
    passing:
      'package main\nimport "testing"\nfunc Add(a, b int) int { return a + b }\nfunc TestAdd(t *testing.T) { if Add(2, 3) != 5 { t.Fatal("2+3") } }\n',
    failing:
      'package main\nimport "testing"\nfunc TestAdd(t *testing.T) { if 2+3 != 6 { t.Fatalf("got %d", 2+3) } }\n',
    passed: /--- PASS: TestAdd/,
    failed: /got 5[\s\S]*--- FAIL: TestAdd/,
  },
  jest: {
    passing:
      "function add(a: number, b: number): number {\n  return a + b;\n}\n\ndescribe('add', () => {\n  test('adds', () => expect(add(2, 3)).toBe(5));\n  test('adds negatives', () => expect(add(-1, 1)).toBe(0));\n});\n",
    failing: "test('off by one', () => {\n  expect([1, 2, 3].length).toBe(4);\n});\n",
    passed: /Tests:\s+2 passed, 2 total/,
    failed: /● off by one[\s\S]*Expected: 4\s+Received: 3[\s\S]*Tests:\s+1 failed, 1 total/,
    stream: "stderr",
  },
};

const mode = await probeIsolationMode();

describe("language table", () => {
  it("has a program or a test module here for every language but sql and verilog (in languages-compat)", () => {
    const ids = LANGUAGE_SPECS.map((s) => s.id).filter((id) => id !== "sql" && id !== "verilog");
    expect([...Object.keys(REVERSE_PROGRAMS), ...Object.keys(TEST_MODULES)].sort()).toEqual(ids.sort());
  });

  it("finds every toolchain on this machine (scripts/install.sh installs them), each with its version", async () => {
    const languages = await listLanguages();
    const missing = languages.filter((l) => !l.available).map((l) => `${l.id}: ${l.missing}`);
    expect(missing).toEqual([]);
    expect(languages.filter((l) => l.version === null).map((l) => l.id)).toEqual([]);
    const version = (id: string) => languages.find((l) => l.id === id)?.version;
    expect(version("junit")).toMatch(/^JUnit 5\.\d+\.\d+/);
    expect(version("jest")).toMatch(/^29\.\d+\.\d+$/);
  });

  it("a version command that fails gives no version, not its error text", async () => {
    const refuses = {
      version: () => ["/usr/bin/sh", "-c", "echo \"Unknown option: '--version'\" >&2; exit 2"],
    };
    expect(await versionOf(refuses)).toBeNull();
    expect(await versionOf({ version: () => ["/usr/bin/sh", "-c", "echo v1.2 >&2"] })).toBe("v1.2");
  });
});

describe.skipIf(mode === null)("every language runs", () => {
  const sandbox = new EmbeddedSandbox(testConfig({ run_timeout_s: 20 }));
  afterAll(() => sandbox.close());

  for (const [language, code] of Object.entries(REVERSE_PROGRAMS)) {
    it.concurrent(language, async () => {
      const response = await sandbox.run({ language, code, stdin: "sandbox\n" });
      expect(response.status, JSON.stringify(response)).toBe("Success");
      expect(response.run_result?.stdout).toBe("xobdnas\n");
      expect(response.compile_result === null).toBe(
        LANGUAGE_SPECS.find((s) => s.id === language)!.compile === undefined,
      );
    });
  }

  for (const [language, module] of Object.entries(TEST_MODULES)) {
    it.concurrent(`${language}: passing tests are Success, a failing test is Failed with the report`, async () => {
      const pass = await sandbox.run({ language, code: module.passing });
      expect(pass.status, JSON.stringify(pass)).toBe("Success");
      expect(pass.run_result?.[module.stream ?? "stdout"]).toMatch(module.passed);
      const fail = await sandbox.run({ language, code: module.failing });
      expect(fail.status, JSON.stringify(fail)).toBe("Failed");
      expect(fail.run_result?.return_code).toBe(1);
      expect(fail.run_result?.[module.stream ?? "stdout"]).toMatch(module.failed);
    });
  }

  it.concurrent("pytest is pinned to an empty configuration: it searches no parent dir for one", async () => {
    const response = await sandbox.run({
      language: "pytest",
      code: "def test_config(pytestconfig):\n    assert str(pytestconfig.inipath) == '/dev/null'\n",
    });
    expect(response.status, JSON.stringify(response)).toBe("Success");
  });

  it.concurrent("pytest with no test in the module is Failed (pytest exits 5)", async () => {
    const response = await sandbox.run({ language: "pytest", code: "def helper():\n    return 1\n" });
    expect(response.status).toBe("Failed");
    expect(response.run_result?.return_code).toBe(5);
  });

  it.concurrent("junit: JUnit 4 tests and any class name run; a class without tests is Failed", async () => {
    const junit4 = await sandbox.run({
      language: "junit",
      code: "import org.junit.Test;\nimport static org.junit.Assert.*;\n\npublic class OldTest {\n  @Test public void adds() { assertEquals(5, 2 + 3); }\n}\n",
    });
    expect(junit4.status, JSON.stringify(junit4)).toBe("Success");
    expect(junit4.run_result?.stdout).toMatch(/1 tests successful/);
    // any class name, not only JUnit's default *Test pattern
    const solution = await sandbox.run({
      language: "junit",
      code: "import org.junit.jupiter.api.Test;\nimport static org.junit.jupiter.api.Assertions.*;\n\npublic class Solution {\n  static int twice(int x) { return 2 * x; }\n  @Test void doubles() { assertEquals(8, twice(4)); }\n}\n",
    });
    expect(solution.status, JSON.stringify(solution)).toBe("Success");
    expect(solution.run_result?.stdout).toMatch(/1 tests successful/);
    const none = await sandbox.run({
      language: "junit",
      code: "public class Empty { int x() { return 1; } }\n",
    });
    expect(none.status).toBe("Failed");
    expect(none.run_result?.return_code).not.toBe(0);
  });

  it.concurrent("sql on an in-memory SQLite database", async () => {
    const response = await sandbox.run({
      language: "sql",
      code: "CREATE TABLE t(x INT); INSERT INTO t VALUES (1), (2), (3); SELECT sum(x), max(x) FROM t;",
    });
    expect(response.status).toBe("Success");
    expect(response.run_result?.stdout).toBe("6|3\n");
  });

  it.concurrent("a broken SQL statement fails the run", async () => {
    const response = await sandbox.run({ language: "sql", code: "SELECT 1; SELEC oops; SELECT 2;" });
    expect(response.status).toBe("Failed");
    expect(response.run_result?.stdout).toBe("1\n");
  });

  it.concurrent("accepts aliases and SandboxFusion's spellings", async () => {
    for (const language of ["javascript", "py", "R", "r", "c++"]) {
      const response = await sandbox.run({ language, code: language.startsWith("c") ? "int main(){}" : "1" });
      expect(response.status, language).not.toBe("SandboxError");
    }
  });

  it.concurrent("a compile error is Failed with the compiler's output and no run", async () => {
    const response = await sandbox.run({ language: "cpp", code: "int main() { return undefined_name; }" });
    expect(response.status).toBe("Failed");
    expect(response.compile_result?.status).toBe("Finished");
    expect(response.compile_result?.return_code).not.toBe(0);
    expect(response.compile_result?.stderr).toContain("undefined_name");
    expect(response.run_result).toBeNull();
    expect(response.message).toMatch(/^compile:/);
  });

  it.concurrent("R starts cleanly under the tests' 256 MB memory limit (all default packages load)", async () => {
    const response = await sandbox.run({
      language: "R",
      code: "x <- stats::median(c(3, 1, 2)); cat(x, '\\n')",
    });
    expect(response.status, JSON.stringify(response)).toBe("Success");
    expect(response.run_result?.stdout).toBe("2 \n");
    expect(response.run_result?.stderr).toBe("");
  });

  it.concurrent("a non-zero exit is Failed with its return code", async () => {
    const response = await sandbox.run({
      language: "python",
      code: "import sys\nprint('partial')\nsys.exit(3)",
    });
    expect(response.status).toBe("Failed");
    expect(response.run_result?.status).toBe("Finished");
    expect(response.run_result?.return_code).toBe(3);
    expect(response.run_result?.stdout).toBe("partial\n");
  });

  it.concurrent("a crash reports its signal", async () => {
    const response = await sandbox.run({
      language: "c",
      code: "int main(void) { return *(volatile int *)0; }",
    });
    expect(response.status).toBe("Failed");
    expect(response.run_result?.signal).toBe("SIGSEGV");
  });

  it.concurrent("a run over its timeout is TimeLimitExceeded", async () => {
    const response = await sandbox.run({ language: "python", code: "while True: pass", run_timeout: 1 });
    expect(response.status).toBe("Failed");
    expect(response.run_result?.status).toBe("TimeLimitExceeded");
    expect(response.run_result?.return_code).toBeNull();
  });

  it.concurrent("a caller that aborts gets the abort reason, not a result", async () => {
    const controller = new AbortController();
    const run = sandbox.run(
      { language: "python", code: "import time\ntime.sleep(60)", run_timeout: 120 },
      { signal: controller.signal },
    );
    setTimeout(() => controller.abort(new Error("caller gave up")), 300);
    await expect(run).rejects.toThrow("caller gave up");
  });

  it.concurrent("honours memory_limit_MB", async () => {
    const code = "x = bytearray(200 * 1024 * 1024)\nprint('allocated')";
    const small = await sandbox.run({ language: "python", code, memory_limit_MB: 128 });
    expect(small.status).toBe("Failed");
    expect(small.run_result?.stderr).toContain("MemoryError");
    const large = await sandbox.run({ language: "python", code, memory_limit_MB: 512 });
    expect(large.status).toBe("Success");
    expect(large.run_result?.peak_memory_kb).toBeGreaterThan(200 * 1024);
  });

  it.concurrent("writes files in, fetches files out", async () => {
    const response = await sandbox.run({
      language: "python",
      code: "import os\nos.makedirs('out', exist_ok=True)\nopen('out/result.txt', 'w').write(open('data/in.txt').read().upper())",
      files: {
        "data/in.txt": Buffer.from("hello").toString("base64"),
        "/work/abs.txt": Buffer.from("x").toString("base64"),
      },
      fetch_files: ["out/result.txt", "abs.txt", "missing.txt"],
    });
    expect(response.status).toBe("Success");
    expect(response.files).toEqual({
      "out/result.txt": Buffer.from("HELLO").toString("base64"),
      "abs.txt": Buffer.from("x").toString("base64"),
    });
  });

  it.concurrent("refuses unknown languages with a SandboxError naming the known ones", async () => {
    const response = await sandbox.run({ language: "cobol", code: "" });
    expect(response.status).toBe("SandboxError");
    expect(response.message).toContain("unknown language");
    expect(response.message).toContain("python");
  });

  it.concurrent("refuses oversized requests", async () => {
    const small = new EmbeddedSandbox(testConfig({ max_request_bytes: 2048 }));
    const response = await small.run({ language: "python", code: `# ${"x".repeat(4096)}` });
    await small.close();
    expect(response.status).toBe("SandboxError");
    expect(response.message).toContain("too large");
  });

  it.concurrent("runs TypeScript with types and ES imports", async () => {
    const code =
      "import { strict as assert } from 'node:assert';\ninterface P { x: number }\nconst p: P = { x: 2 };\nassert.equal(p.x * 21, 42);\nconsole.log('ok');";
    const response = await sandbox.run({ language: "typescript", code });
    expect(response.status, JSON.stringify(response)).toBe("Success");
    expect(response.run_result?.stdout).toBe("ok\n");
  });

  it.concurrent("runs Java whose main class is not the public one's file name", async () => {
    const code =
      "class Helper { static int two() { return 2; } }\npublic class Main { public static void main(String[] a) { System.out.println(Helper.two()); } }";
    const response = await sandbox.run({ language: "java", code });
    expect(response.status, JSON.stringify(response)).toBe("Success");
    expect(response.run_result?.stdout).toBe("2\n");
  });
});
