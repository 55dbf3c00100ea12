// SandboxFusion's runner tests, as behaviours of our own: the libraries its image has (requests,
// lodash, javatuples, testify, luaunit, Test::Deep), Java's -ea, C#'s implicit usings and failing
// Debug.Assert, go_test timed as a whole, D_ut, jest, kotlin_script, racket and verilog, /mnt paths
// in files and fetch_files, and the languages it serves that we do not, refused by name.
import { existsSync, readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { EmbeddedSandbox, findLanguage, type RunCodeRequest } from "../../pipeline/sandbox/index.js";
import { UNSERVED_LANGUAGES } from "../../pipeline/sandbox/languages.js";
import { missingToolchain } from "../../pipeline/sandbox/toolchains.js";
import { probeIsolationMode, testConfig } from "./helpers.js";

const mode = await probeIsolationMode();
const b64 = (text: string) => Buffer.from(text).toString("base64");

describe.skipIf(mode === null)("SandboxFusion's runner behaviours", () => {
  const sandbox = new EmbeddedSandbox(testConfig({ run_timeout_s: 30 }));
  afterAll(() => sandbox.close());
  const run = (request: RunCodeRequest) => sandbox.run(request);

  it.concurrent("python: requests talks to a server the program started on 127.0.0.1 and localhost", async () => {
    const code = `import http.server, threading, requests
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(b"special string")
    def log_message(self, *a): pass
server = http.server.HTTPServer(("127.0.0.1", 0), H)
threading.Thread(target=server.serve_forever, daemon=True).start()
for host in ("127.0.0.1", "localhost"):
    print(host, requests.get(f"http://{host}:{server.server_port}", timeout=5).text)`;
    const response = await run({ language: "python", code });
    expect(response.status, JSON.stringify(response)).toBe("Success");
    expect(response.run_result?.stdout).toBe("127.0.0.1 special string\nlocalhost special string\n");
  });

  it.concurrent("files and fetch_files at /mnt paths land in the run's own /mnt", async () => {
    const response = await run({
      language: "python",
      code: 'print(open("/mnt/data/in.txt").read()); open("/mnt/b", "w").write("sauce"); open("a.txt", "w").write("secret")',
      files: { "/mnt/data/in.txt": b64("from the request") },
      fetch_files: ["a.txt", "/mnt/b"],
    });
    expect(response.status, JSON.stringify(response)).toBe("Success");
    expect(response.run_result?.stdout).toBe("from the request\n");
    expect(response.files).toEqual({ "a.txt": b64("secret"), "/mnt/b": b64("sauce") });
    // the sandbox's /mnt, not the host's
    expect(existsSync("/mnt/b")).toBe(false);
    expect(existsSync("/mnt/data/in.txt")).toBe(false);
  });

  it.concurrent("nodejs and typescript load Debian's lodash", async () => {
    const js = await run({
      language: "nodejs",
      code: 'const _ = require("lodash"); const assert = require("assert"); assert(_.isEqual({a: [1]}, {a: [1]})); console.log(_.chunk([1, 2, 3], 2).length);',
    });
    expect(js.status, JSON.stringify(js)).toBe("Success");
    expect(js.run_result?.stdout).toBe("2\n");
    const ts = await run({
      language: "typescript",
      code: 'import _ from "lodash";\nconst xs: number[] = _.uniq([1, 1, 2]);\nconsole.log(xs.join(","));',
    });
    expect(ts.status, JSON.stringify(ts)).toBe("Success");
    expect(ts.run_result?.stdout).toBe("1,2\n");
  });

  it.concurrent("java: assertions are on, and javatuples is on the class path", async () => {
    const assertion = await run({
      language: "java",
      code: 'public class Main { public static void main(String[] a) { assert 1 == 2 : "one is not two"; } }',
    });
    expect(assertion.status).toBe("Failed");
    expect(assertion.run_result?.status).toBe("Finished");
    expect(assertion.run_result?.stderr).toContain("java.lang.AssertionError: one is not two");
    const tuples = await run({
      language: "java",
      code: 'import org.javatuples.Triplet;\npublic class Main { public static void main(String[] a) { Triplet<String, Integer, Double> t = Triplet.with("banana", 2, 0.99); System.out.println(t.getValue0() + " " + t.getValue2()); } }',
    });
    expect(tuples.status, JSON.stringify(tuples)).toBe("Success");
    expect(tuples.run_result?.stdout).toBe("banana 0.99\n");
  });

  it.concurrent("csharp: .NET's implicit usings, and a failing Debug.Assert fails the run", async () => {
    const implicit = await run({
      language: "csharp",
      code: "public class Program { public static void Main(string[] args) { var xs = new List<int> { Convert.ToInt32(Console.ReadLine()) }; Console.WriteLine(xs.Sum()); } }",
      stdin: "65535",
    });
    expect(implicit.status, JSON.stringify(implicit)).toBe("Success");
    expect(implicit.run_result?.stdout).toBe("65535\n");
    const failing = await run({
      language: "csharp",
      code: 'using System.Diagnostics;\npublic class Program { public static void Main() { Debug.Assert(1 == 1); Console.WriteLine("checked"); Debug.Assert(1 == 2, "one is not two"); Console.WriteLine("after"); } }',
    });
    expect(failing.status).toBe("Failed");
    expect(failing.run_result?.status).toBe("Finished");
    expect(failing.run_result?.stdout).toBe("checked\n");
    expect(failing.run_result?.stderr).toContain("Assertion failed");
    expect(failing.run_result?.stderr).toContain("one is not two");
    // a compile error still points at the code's own line
    const broken = await run({
      language: "csharp",
      code: "class P {\n  static void Main() { undefinedName(); }\n}",
    });
    expect(broken.compile_result?.return_code).not.toBe(0);
    expect(broken.compile_result?.stderr).toMatch(/main\.cs\(2,\d+\): error CS0103/);
  });

  it.concurrent("go_test: testify, go test as one run step under the run timeout", async () => {
    const test = (expected: string) =>
      `package main\nimport (\n  "testing"\n  "github.com/stretchr/testify/assert"\n)\nfunc Double(x int) int { return 2 * x }\nfunc TestDouble(t *testing.T) { assert.Equal(t, ${expected}, Double(2)) }\n`;
    const pass = await run({ language: "go_test", code: test("4") });
    expect(pass.status, JSON.stringify(pass)).toBe("Success");
    expect(pass.compile_result).toBeNull();
    expect(pass.run_result?.stdout).toMatch(/^ok\s/m);
    const fail = await run({ language: "go_test", code: test("5") });
    expect(fail.status).toBe("Failed");
    expect(fail.run_result?.stdout).toContain("Not equal");
    const broken = await run({
      language: "go_test",
      code: 'package main\nimport "testing"\nfunc TestX(t *testing.T) { undefinedCall() }\n',
    });
    expect(broken.status).toBe("Failed");
    expect(broken.compile_result).toBeNull();
    expect(`${broken.run_result?.stdout}${broken.run_result?.stderr}`).toContain("undefinedCall");
    // the build counts against the run timeout: a test that sleeps past it never reports
    const slow = await run({
      language: "go_test",
      code: 'package main\nimport (\n  "testing"\n  "time"\n)\nfunc TestSlow(t *testing.T) { time.Sleep(3 * time.Second) }\n',
      run_timeout: 1,
    });
    expect(slow.status).toBe("Failed");
    expect(slow.run_result?.status).toBe("TimeLimitExceeded");
  });

  it.concurrent("lua: luaunit; perl: Test::Deep and Data::Compare", async () => {
    const luaPass = await run({
      language: "lua",
      code: "local lu = require('luaunit')\nlu.assertEquals({1, 2}, {1, 2})",
    });
    expect(luaPass.status, JSON.stringify(luaPass)).toBe("Success");
    const luaFail = await run({
      language: "lua",
      code: "local lu = require('luaunit')\nlu.assertEquals(1, 2)",
    });
    expect(luaFail.status).toBe("Failed");
    expect(luaFail.run_result?.stderr).toContain("LuaUnit test FAILURE");
    const perl = (a: string) =>
      `use Test::Deep;\nuse Data::Compare;\nif (eq_deeply([${a}], [1, 2]) && Compare(1, 1)) { print "ok\\n" } else { exit 1 }`;
    const perlPass = await run({ language: "perl", code: perl("1, 2") });
    expect(perlPass.status, JSON.stringify(perlPass)).toBe("Success");
    expect(perlPass.run_result?.stdout).toBe("ok\n");
    expect((await run({ language: "perl", code: perl("2, 1") })).status).toBe("Failed");
  });

  it.concurrent("D_ut: unittest blocks run before main and fail the run", async () => {
    const hello = await run({
      language: "D_ut",
      code: 'import std.stdio;\nvoid main() { writeln("Hello, World!"); }',
    });
    expect(hello.status, JSON.stringify(hello)).toBe("Success");
    expect(hello.run_result?.stdout).toBe("Hello, World!\n");
    const pass = await run({ language: "D_ut", code: "unittest { assert(1 + 1 == 2); }\nvoid main() {}" });
    expect(pass.status, JSON.stringify(pass)).toBe("Success");
    const fail = await run({ language: "D_ut", code: "unittest { assert(0 == 1); }\nvoid main() {}" });
    expect(fail.status).toBe("Failed");
    expect(fail.run_result?.status).toBe("Finished");
    expect(fail.run_result?.stderr).toContain("unittest");
  });

  it.concurrent("jest: a TypeScript suite on @jest/globals passes; a wrong implementation fails it", async () => {
    const suite = (body: string) => `import { describe, expect, test } from '@jest/globals';

function minSubArrayLen(target: number, nums: number[]): number {
${body}
}

describe('minSubArrayLen', () => {
  test('shortest run reaching the target', () => {
    expect(minSubArrayLen(7, [2, 3, 1, 2, 4, 3])).toBe(2);
    expect(minSubArrayLen(15, [1, 2, 3, 4, 5])).toBe(5);
  });
  test('no run reaches it', () => expect(minSubArrayLen(100, [1, 2, 3])).toBe(0));
  test('one element', () => expect(minSubArrayLen(3, [3])).toBe(1));
});
`;
    const right = `  let best = Infinity, sum = 0, start = 0;
  for (let end = 0; end < nums.length; end++) {
    sum += nums[end];
    while (sum >= target) { best = Math.min(best, end - start + 1); sum -= nums[start++]; }
  }
  return best === Infinity ? 0 : best;`;
    const pass = await run({ language: "jest", code: suite(right) });
    expect(pass.status, JSON.stringify(pass)).toBe("Success");
    expect(pass.compile_result).toBeNull();
    expect(pass.run_result?.status).toBe("Finished");
    expect(pass.run_result?.stderr).toMatch(/Tests:\s+3 passed, 3 total/);
    const stub = await run({ language: "jest", code: suite("  return 0;") });
    expect(stub.status).toBe("Failed");
    expect(stub.run_result?.status).toBe("Finished");
    expect(stub.run_result?.return_code).toBe(1);
    expect(stub.run_result?.stderr).toMatch(/Tests:\s+2 failed, 1 passed, 3 total/);
  });

  it.concurrent("jest: lodash and the request's files beside the test; the request's config files are not read", async () => {
    const response = await run({
      language: "jest",
      code: "import _ from 'lodash';\nimport { total } from './lib/total';\n\ntest('sums a range', () => {\n  expect(total(_.range(5))).toBe(10);\n});\n",
      files: {
        "lib/total.ts": b64(
          "export const total = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);\n",
        ),
        "babel.config.js": b64("throw new Error('the request\\'s babel config was read');\n"),
        "jest.config.js": b64("throw new Error('the request\\'s jest config was read');\n"),
      },
    });
    expect(response.status, JSON.stringify(response)).toBe("Success");
    expect(response.run_result?.stderr).toMatch(/Tests:\s+1 passed, 1 total/);
    // a TypeScript syntax error fails the run with babel's report
    const broken = await run({ language: "jest", code: "test('x', () => { const n: number = ; });\n" });
    expect(broken.status).toBe("Failed");
    expect(broken.run_result?.stderr).toContain("Test suite failed to run");
  });

  it.concurrent("jest: every test file of the request runs, as in SandboxFusion's run dir; no test fails the run", async () => {
    const both = await run({
      language: "jest",
      code: "test('here', () => expect(1).toBe(1));\n",
      files: { "more.test.js": b64("test('there', () => expect(2).toBe(3));\n") },
    });
    expect(both.status).toBe("Failed");
    expect(both.run_result?.stderr).toMatch(/PASS \.\/main\.test\.ts/);
    expect(both.run_result?.stderr).toMatch(/FAIL \.\/more\.test\.js[\s\S]*● there/);
    const none = await run({ language: "jest", code: "export const unused = 1;\n" });
    expect(none.status).toBe("Failed");
    expect(none.run_result?.stderr).toContain("Your test suite must contain at least one test");
  });

  it.concurrent("kotlin_script: a script runs; an exception fails it with the JVM's report", async () => {
    const ok = await run({
      language: "kotlin_script",
      code: 'val xs = listOf(3, 1, 2)\nprintln("sorted " + xs.sorted())',
    });
    expect(ok.status, JSON.stringify(ok)).toBe("Success");
    expect(ok.run_result?.stdout).toBe("sorted [1, 2, 3]\n");
    const thrown = await run({
      language: "kotlin_script",
      code: 'fun main() { if (1 != 2) throw Exception("test case did not pass") }\nmain()',
    });
    expect(thrown.status).toBe("Failed");
    expect(thrown.run_result?.status).toBe("Finished");
    expect(thrown.run_result?.stderr).toContain("java.lang.Exception: test case did not pass");
  });

  it.concurrent("racket: a module with rackunit checks", async () => {
    const response = await run({
      language: "racket",
      code: '#lang racket\n(require rackunit)\n(define (strlen s) (string-length s))\n(check-equal? (strlen "abc") 3)\n(display "Hello, World!")',
    });
    expect(response.status, JSON.stringify(response)).toBe("Success");
    expect(response.run_result?.stdout).toBe("Hello, World!");
  });

  it.concurrent("verilog: a SystemVerilog testbench compiles and simulates", async () => {
    const code = `module top_module(input a, input b, output out);
  assign out = a & b;
endmodule
module tb();
  typedef struct packed { int errors; int clocks; } stats;
  stats s;
  logic a, b, out;
  top_module dut(.a, .b, .out);
  initial begin
    s = '0;
    for (int i = 0; i < 4; i++) begin
      {a, b} = i[1:0]; #1;
      s.clocks++;
      if (out !== (a & b)) s.errors++;
    end
    $display("Mismatches: %0d in %0d samples", s.errors, s.clocks);
    $finish;
  end
endmodule`;
    const response = await run({ language: "verilog", code });
    expect(response.status, JSON.stringify(response)).toBe("Success");
    expect(response.run_result?.stdout).toContain("Mismatches: 0 in 4 samples");
    const broken = await run({ language: "verilog", code: "module m(; endmodule" });
    expect(broken.status).toBe("Failed");
    expect(broken.compile_result?.return_code).not.toBe(0);
  });
});

describe("languages and paths SandboxFusion knows that we refuse, with SandboxFusion's error shape", () => {
  const sandbox = new EmbeddedSandbox(testConfig());
  afterAll(() => sandbox.close());

  it.each(Object.keys(UNSERVED_LANGUAGES))("%s: a SandboxError naming what is missing", async (language) => {
    const response = await sandbox.run({ language, code: "print(1)" });
    expect(response).toMatchObject({
      status: "SandboxError",
      compile_result: null,
      run_result: null,
      files: {},
      problem: "toolchain_missing",
    });
    expect(response.message).toContain(
      `${language} is not served by this sandbox: ${UNSERVED_LANGUAGES[language]}`,
    );
  });

  it("a served language whose toolchain this machine lacks is reported unavailable with its packages", () => {
    const racket = findLanguage("racket")!;
    const elsewhere = { ...racket, requires: () => ["/usr/bin/racket-not-installed-here"] };
    expect(missingToolchain(racket)).toEqual([]);
    expect(missingToolchain(elsewhere)).toEqual(["/usr/bin/racket-not-installed-here"]);
  });

  it("jest on a machine without Debian's jest is reported unavailable with its packages", async () => {
    const jest = findLanguage("jest")!;
    const absent = "/usr/share/nodejs/jest-not-installed-here/bin/jest.js";
    const without = { ...jest, requires: (c: Parameters<typeof jest.requires>[0]) => [absent, c.nodePath] };
    expect(missingToolchain(jest)).toEqual([]);
    expect(missingToolchain(without)).toEqual([absent]);
    expect(jest.debianPackages).toContain("jest");
  });

  it("an unknown language is named as unknown, with the ones served", async () => {
    const response = await sandbox.run({ language: "cobol", code: "" });
    expect(response.status).toBe("SandboxError");
    expect(response.problem).toBe("unknown_language");
    expect(response.message).toMatch(/unknown language "cobol".*kotlin_script/);
  });
});

describe.skipIf(mode === null)("bad paths never reach the host", () => {
  const sandbox = new EmbeddedSandbox(testConfig());
  afterAll(() => sandbox.close());

  it.concurrent.each(["../../etc/passwd", "/etc/cron.d/x", "/mnt/../etc/x", "/work/../../etc/x"])(
    "files at %j: a SandboxError, nothing written",
    async (path) => {
      const response = await sandbox.run({
        language: "python",
        code: "print(1)",
        files: { [path]: b64("owned") },
      });
      expect(response.status).toBe("SandboxError");
      expect(response.problem).toBe("invalid_request");
      expect(response.message).toContain(JSON.stringify(path));
      expect(existsSync("/etc/cron.d/x")).toBe(false);
      expect(existsSync("/etc/x")).toBe(false);
    },
  );

  it.concurrent("fetch_files never follows a link the program placed, in /work or /mnt", async () => {
    const passwd = readFileSync("/etc/passwd");
    const response = await sandbox.run({
      language: "python",
      code: 'import os\nos.symlink("/etc/passwd", "/mnt/link")\nos.symlink("/etc", "/mnt/dir")\nos.symlink("/etc/passwd", "out")\nopen("/mnt/real", "w").write("mine")',
      fetch_files: ["/mnt/link", "/mnt/dir/passwd", "out", "../../etc/passwd", "/etc/passwd", "/mnt/real"],
    });
    expect(response.status, JSON.stringify(response)).toBe("Success");
    expect(response.files).toEqual({ "/mnt/real": b64("mine") });
    expect(readFileSync("/etc/passwd")).toEqual(passwd);
  });

  it.concurrent("a request's later file cannot go through an earlier one", async () => {
    const response = await sandbox.run({
      language: "python",
      code: "print(1)",
      files: { "/mnt/a": b64("file"), "/mnt/a/b": b64("below") },
    });
    expect(response.status).toBe("SandboxError");
    expect(response.message).toContain("goes through");
  });
});
