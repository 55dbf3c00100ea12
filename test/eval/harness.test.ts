import { describe, expect, it } from "vitest";
import { cLiteral } from "../../pipeline/eval/harness/c.js";
import { cppLiteral, cppType } from "../../pipeline/eval/harness/cpp.js";
import { csharpHarness, csharpLiteral, csharpType } from "../../pipeline/eval/harness/csharp.js";
import { goHarness, goLiteral, goType, splitGoImports } from "../../pipeline/eval/harness/go.js";
import { fillProgram, HARNESSES, harnessFor } from "../../pipeline/eval/harness/index.js";
import { javaLiteral, javaType } from "../../pipeline/eval/harness/java.js";
import {
  javascriptHarness,
  javascriptLiteral,
  typescriptLiteral,
  typescriptType,
} from "../../pipeline/eval/harness/javascript.js";
import { luaLiteral, luaString } from "../../pipeline/eval/harness/lua.js";
import { perlLiteral } from "../../pipeline/eval/harness/perl.js";
import { phpHarness, phpLiteral } from "../../pipeline/eval/harness/php.js";
import { pythonLiteral } from "../../pipeline/eval/harness/python.js";
import { rLiteral } from "../../pipeline/eval/harness/r.js";
import { rubyLiteral } from "../../pipeline/eval/harness/ruby.js";
import { rustHarness, rustLiteral, rustType } from "../../pipeline/eval/harness/rust.js";
import { scalaHarness, scalaLiteral, scalaType } from "../../pipeline/eval/harness/scala.js";
import { parseQuestion } from "../../pipeline/eval/question.js";
import { parseSchemaType } from "../../pipeline/eval/schema-type.js";

const t = parseSchemaType;
const table = { a: [1, 2.5] };
const tableType = t("map<string;list<double>>");
const byLength = { "1": ["x"] };
const byLengthType = t("map<integer;list<string>>");
const type3 = t("map<string;list<set<character>>>");

describe("BabelCode type names", () => {
  const type = t("map<string;list<set<character>>>");
  it("follows BabelCode's mapping per language", () => {
    expect(cppType(type)).toBe("map<string,vector<set<char>>>");
    expect(javaType(type)).toBe("Map<String, ArrayList<HashSet<Character>>>");
    expect(goType(type)).toBe("map[string][]map[rune]bool");
    expect(rustType(type)).toBe("HashMap<String, Vec<HashSet<char>>>");
    expect(typescriptType(type)).toBe("Record<string,Array<Set<string>>>");
    expect(csharpType(type)).toBe("Dictionary<string, List<HashSet<char>>>");
    expect(csharpType(t("double"))).toBe("decimal");
    expect(rustType(t("float"))).toBe("f32");
    expect(cppType(t("long"))).toBe("long long");
    expect(goType(t("long"))).toBe("int64");
  });
});

describe("literals", () => {
  it("python", () => {
    expect(pythonLiteral(table, tableType)).toBe('{"a": [1.0, 2.5]}');
    expect(pythonLiteral(byLength, byLengthType)).toBe('{1: ["x"]}');
    expect(pythonLiteral([], t("set<integer>"))).toBe("set()");
    expect(pythonLiteral(["b", "a"], t("set<string>"))).toBe('{"b", "a"}');
    expect(pythonLiteral([true, false], t("list<boolean>"))).toBe("[True, False]");
  });

  it("javascript and typescript", () => {
    expect(javascriptLiteral(table, tableType)).toBe('{"a": [1.0, 2.5]}');
    expect(javascriptLiteral(["x"], t("set<character>"))).toBe('new Set(["x"])');
    expect(typescriptLiteral(["x"], t("set<character>"))).toBe('new Set<string>(["x"])');
    expect(javascriptLiteral(byLength, byLengthType)).toBe('{"1": ["x"]}');
    expect(javascriptLiteral("a\u2028b", t("string"))).toBe('"a\\u2028b"');
  });

  it("c++", () => {
    expect(cppLiteral(table, tableType)).toBe(
      'map<string,vector<double>>{{string("a"), vector<double>{1.0, 2.5}}}',
    );
    expect(cppLiteral(-2147483648, t("integer"))).toBe("(-2147483647 - 1)");
    expect(cppLiteral(5, t("long"))).toBe("5LL");
    expect(cppLiteral(0.5, t("float"))).toBe("0.5f");
    expect(cppLiteral("'", t("character"))).toBe("'\\''");
    expect(cppLiteral("a\u0001b", t("string"))).toBe('string("a\\001b")');
  });

  it("java", () => {
    expect(javaLiteral(table, tableType)).toBe(
      'QuestionEvaluator.<String, ArrayList<Double>>bcMap(Map.entry("a", new ArrayList<Double>(Arrays.asList(1.0, 2.5))))',
    );
    expect(javaLiteral({}, tableType)).toBe("new HashMap<String, ArrayList<Double>>()");
    expect(javaLiteral([], t("list<long>"))).toBe("new ArrayList<Long>()");
    expect(javaLiteral([3], t("set<integer>"))).toBe("new HashSet<Integer>(Arrays.asList(3))");
    expect(javaLiteral(7, t("long"))).toBe("7L");
    expect(javaLiteral("\n", t("character"))).toBe("'\\n'");
  });

  it("go", () => {
    expect(goLiteral(table, tableType)).toBe(
      'map[string][]float64{"a": []float64{float64(1.0), float64(2.5)}}',
    );
    expect(goLiteral(["a"], t("set<character>"))).toBe("map[rune]bool{rune('a'): true}");
    expect(goLiteral(byLength, byLengthType)).toBe('map[int][]string{int(1): []string{"x"}}');
    expect(goLiteral("\u0007", t("string"))).toBe('"\\x07"');
  });

  it("rust", () => {
    expect(rustLiteral(table, tableType)).toBe(
      'std::collections::HashMap::from([(String::from("a"), vec![1.0, 2.5])])',
    );
    expect(rustLiteral([1, 2], t("set<integer>"))).toBe("std::collections::HashSet::from([1, 2])");
    expect(rustLiteral("\\", t("character"))).toBe("'\\\\'");
  });

  it("c#", () => {
    expect(csharpLiteral(table, tableType)).toBe(
      'new Dictionary<string, List<decimal>>{{"a", new List<decimal>{1.0m, 2.5m}}}',
    );
    expect(csharpLiteral(["q"], t("set<character>"))).toBe("new HashSet<char>{'q'}");
    expect(csharpLiteral(1.5, t("float"))).toBe("1.5f");
  });

  it("php", () => {
    expect(phpLiteral(table, tableType)).toBe("array('a' => array(1.0, 2.5))");
    expect(phpLiteral(["x", "y"], t("set<string>"))).toBe("array('x' => true, 'y' => true)");
    expect(phpLiteral("it's $x\\", t("string"))).toBe("'it\\'s $x\\\\'");
  });

  it("lua", () => {
    expect(luaLiteral(table, tableType)).toBe('{["a"]={1.0, 2.5}}');
    expect(luaLiteral(byLength, byLengthType)).toBe('{[1]={"x"}}');
    expect(luaLiteral(["x"], t("set<character>"))).toBe('{["x"]=true}');
    expect(luaString("a\n1é")).toBe('"a\\0101\\195\\169"');
  });

  it("r", () => {
    expect(rLiteral(table, tableType)).toBe('list("a" = list(1.0, 2.5))');
    expect(rLiteral([true], t("list<boolean>"))).toBe("list(TRUE)");
    expect(rLiteral(5, t("integer"))).toBe("5L");
    expect(rLiteral(10_000_000_000, t("long"))).toBe("10000000000.0");
    expect(() => rLiteral(byLength, byLengthType)).toThrow("R list names are strings");
  });

  it("scala", () => {
    expect(scalaType(type3)).toBe("HashMap[String, List[HashSet[Char]]]");
    expect(scalaLiteral(table, tableType)).toBe(
      'HashMap[String, List[Double]]("a" -> List[Double](1.0, 2.5))',
    );
    expect(scalaLiteral([], t("set<integer>"))).toBe("HashSet[Int]()");
    expect(scalaLiteral(byLength, byLengthType)).toBe('HashMap[Int, List[String]](1 -> List[String]("x"))');
    expect(scalaLiteral(5, t("long"))).toBe("5L");
    expect(scalaLiteral(0.5, t("float"))).toBe("0.5F");
  });

  it("perl", () => {
    expect(perlLiteral(table, tableType)).toBe("{'a' => [1.0, 2.5]}");
    expect(perlLiteral(["x"], t("set<character>"))).toBe("{'x' => 1}");
    expect(perlLiteral(byLength, byLengthType)).toBe("{1 => ['x']}");
    expect(perlLiteral([true, false], t("list<boolean>"))).toBe("[1, 0]");
    expect(perlLiteral("$x @y", t("string"))).toBe("'$x @y'");
  });

  it("c: leaves only, as C has no container that knows its length", () => {
    expect(cLiteral("a\u0001", t("string"))).toBe('"a\\001"');
    expect(cLiteral(3, t("long"))).toBe("3LL");
    expect(() => cLiteral([1], t("list<integer>"))).toThrow(/^C has no list, set or map type/);
    expect(() => cLiteral("é", t("character"))).toThrow("C char holds one byte");
  });

  it("ruby", () => {
    expect(rubyLiteral(table, tableType)).toBe("{'a' => [1.0, 2.5]}");
    expect(rubyLiteral([1], t("set<integer>"))).toBe("Set[1]");
    expect(rubyLiteral("#{x}", t("string"))).toBe("'#{x}'");
  });
});

describe("generated programs", () => {
  const question = parseQuestion({
    question_id: "q",
    schema: { params: [{ name: "xs", type: "list<integer>" }], return: { type: "integer" } },
    test_cases: [
      { idx: 0, inputs: { xs: [1] }, outputs: 1 },
      { idx: "edge-1", inputs: { xs: [] }, outputs: 0 },
    ],
  });

  it("print one TEST line per test case in every language", () => {
    // Leaf types only, so C (which has no containers) writes it too.
    const leaves = parseQuestion({
      question_id: "q",
      schema: { params: [{ name: "s", type: "string" }], return: { type: "integer" } },
      test_cases: [
        { idx: 0, inputs: { s: "a" }, outputs: 1 },
        { idx: "edge-1", inputs: { s: "" }, outputs: 0 },
      ],
    });
    expect(HARNESSES.map((h) => h.language).sort()).toEqual([
      "c",
      "cpp",
      "csharp",
      "go",
      "java",
      "javascript",
      "lua",
      "perl",
      "php",
      "python",
      "r",
      "ruby",
      "rust",
      "scala",
      "typescript",
    ]);
    for (const harness of HARNESSES) {
      const code = harness.generate(leaves);
      expect(code, harness.language).toContain("PLACEHOLDER_CODE_BODY");
      expect(code, harness.language).toContain("TEST-0...");
      expect(code, harness.language).toContain("TEST-edge-1...");
      expect(code.split("PLACEHOLDER_CALLEE").length - 1, harness.language).toBe(2);
    }
  });

  it("fill the prediction in without reading $ patterns in it", () => {
    const program = fillProgram(
      phpHarness,
      phpHarness.generate(question),
      "<?php\nfunction f($xs) { return count($xs); /* $& $1 */ }\n?>",
      "f",
    );
    expect(program.startsWith("<?php\n\nfunction f($xs) { return count($xs); /* $& $1 */ }")).toBe(true);
    expect(program).toContain("function () { return f(array(1)); }");
    expect(program).not.toContain("PLACEHOLDER");
  });

  it("hoist Rust inner attributes and add the collections BabelCode's header brings", () => {
    const code =
      "#![allow(dead_code)]\nuse std::collections::{HashSet};\nfn f(xs: Vec<i32>) -> i32 { xs.len() as i32 }";
    const program = fillProgram(rustHarness, rustHarness.generate(question), code, "f");
    expect(program.startsWith("#![allow(dead_code)]\n#![allow(")).toBe(true);
    expect(program).toContain("use std::collections::HashMap;\nuse std::collections::{HashSet};\nfn f(");
    expect(program).not.toContain("use std::collections::HashSet;");
    expect(program).toContain('bc_check("TEST-0...", || f(vec![1]), 1);');
  });

  it("move Python's __future__ imports above the harness's imports", () => {
    const python = harnessFor("python")!;
    const program = fillProgram(
      python,
      python.generate(question),
      "from __future__ import annotations\ndef f(xs): return len(xs)\n",
      "f",
    );
    expect(program.startsWith("from __future__ import annotations\nimport collections\n")).toBe(true);
    expect(program).toContain("\ndef f(xs): return len(xs)\n");
    const multiline = fillProgram(
      python,
      python.generate(question),
      '"""Doc."""\nfrom __future__ import (annotations,\n    division)\ndef f(xs): return len(xs)\n',
      "f",
    );
    expect(
      multiline.startsWith("from __future__ import (annotations,\n    division)\nimport collections\n"),
    ).toBe(true);
    expect(multiline).toContain('"""Doc."""\n\ndef f(xs)');
  });

  it("drop Go's package clause and the imports the header already has", () => {
    expect(
      splitGoImports(
        'package main\n\nimport "fmt"\nimport (\n\t"sort"\n\tm "math"\n\t"container/heap"\n)\nfunc f() {}',
      ),
    ).toEqual({
      imports: [{ path: "fmt" }, { path: "sort" }, { alias: "m", path: "math" }, { path: "container/heap" }],
      rest: "\nfunc f() {}",
    });
    const prepared = goHarness.prepare('package main\nimport (\n\t"fmt"\n\t"container/heap"\n)\nfunc f() {}');
    expect(prepared).toEqual({ prelude: 'import (\n\t"container/heap"\n)', body: "func f() {}" });
  });

  it("strip ES module exports in JavaScript, which runs as CommonJS", () => {
    expect(
      javascriptHarness.prepare("export default function f() {}\nexport const g = 1;\nexport default g;")
        .body,
    ).toBe("function f() {}\nconst g = 1;\n");
  });

  it("call through the class where the language needs one", () => {
    expect(harnessFor("java")?.callee("f", "Solution", "")).toBe("new Solution().f");
    expect(csharpHarness.callee("F", undefined, "namespace Demo.App {\n class Solution {} }")).toBe(
      "new global::Demo.App.Solution().F",
    );
    expect(harnessFor("python")?.callee("f", undefined, "")).toBe("f");
    expect(harnessFor("python")?.callee("f", "Solution", "")).toBe("Solution().f");
    expect(harnessFor("ruby")?.callee("f", "Solution", "")).toBe("Solution.new.f");
    expect(harnessFor("rust")?.callee("f", "Solution", "")).toBe("Solution::f");
    expect(harnessFor("cpp")?.callee("f", "Solution", "")).toBe("Solution().f");
    expect(scalaHarness.callee("f", "Solution", "object Solution {}")).toBe("Solution.f");
    expect(scalaHarness.callee("f", "Solution", "class Solution {}")).toBe("new Solution().f");
    expect(harnessFor("perl")?.callee("f", "Solution", "")).toBe("Solution->new->f");
  });

  it("put Scala code inside an object the driver imports, after the driver (the sandbox launches the first App)", () => {
    const program = fillProgram(
      scalaHarness,
      scalaHarness.generate(question),
      "package a.b\ndef f(xs: List[Int]) = xs.length",
      "f",
    );
    expect(program.indexOf("object QuestionEvaluator extends App")).toBeLessThan(
      program.indexOf("object BcSolution {"),
    );
    expect(program).toContain("object BcSolution {\n\ndef f(xs: List[Int]) = xs.length\n}");
    expect(program).toContain('bcCheck("TEST-0...", () => f(List[Int](1)), 1, 0)');
  });
});
