// How a block from an answer becomes a program the sandbox can run. A script runs as it is. A bare
// function or class (what most answers show) gets what a judge would add around it so that its syntax
// and definitions are checked: an empty entry point, a class to live in, the usual imports. The code
// itself is only surrounded (a Java or Go package line aside), so an error the sandbox reports is the block's own.
import type { LanguageName } from "../../pipeline/code/index.js";

export type HarnessKind =
  /** the block is a whole program and runs as written */
  | "as-is"
  /** a bare definition, given an empty entry point (and a class or imports where the language needs them) */
  | "definitions";

export interface Harnessed {
  code: string;
  harness: HarnessKind;
}

const HAS_INCLUDE = /^\s*#\s*include\b/m;

const C_HEADERS = ["stdio.h", "stdlib.h", "string.h", "stdbool.h", "math.h", "limits.h", "ctype.h"]
  .map((h) => `#include <${h}>`)
  .join("\n");

const CSHARP_USINGS = [
  "using System;",
  "using System.Collections.Generic;",
  "using System.Linq;",
  "using System.Text;",
].join("\n");

/** The program to send for `code` in `language`, and whether a harness was put around it. */
export function harnessFor(code: string, language: LanguageName): Harnessed {
  switch (language) {
    case "c":
      if (/\bmain\s*\(/.test(code)) return { code, harness: "as-is" };
      return {
        code: `${HAS_INCLUDE.test(code) ? "" : `${C_HEADERS}\n`}${code}\n\nint main(void) { return 0; }\n`,
        harness: "definitions",
      };
    case "cpp":
      if (/\bmain\s*\(/.test(code)) return { code, harness: "as-is" };
      // A judge's prelude: LeetCode-style answers use std names without includes or qualification.
      return {
        code: `${HAS_INCLUDE.test(code) ? "" : "#include <bits/stdc++.h>\nusing namespace std;\n"}${code}\n\nint main() { return 0; }\n`,
        harness: "definitions",
      };
    case "java":
      return javaHarness(code);
    case "csharp":
      return csharpHarness(code);
    case "go":
      return goHarness(code);
    case "rust":
      if (/\bfn\s+main\s*\(/.test(code)) return { code, harness: "as-is" };
      return { code: `${code}\n\nfn main() {}\n`, harness: "definitions" };
    case "scala":
      return scalaHarness(code);
    case "php":
      // the CLI prints a file without the opening tag instead of running it
      return { code: /<\?php/.test(code) ? code : `<?php\n${code}\n`, harness: "as-is" };
    default:
      return { code, harness: "as-is" };
  }
}

function javaHarness(code: string): Harnessed {
  // Run from the work dir's root: a package declaration would put the classes where `java` does not look.
  const body = code.replace(/^\s*package\s+[\w.]+\s*;\s*$/m, "");
  if (/\bstatic\s+(?:public\s+)?void\s+main\s*\(/.test(body)) return { code: body, harness: "as-is" };
  const imports = /^\s*import\s+[\w.*]+\s*;/m.test(body)
    ? ""
    : "import java.util.*;\nimport java.util.stream.*;\n";
  const declaresType = /\b(?:class|interface|enum|record)\s+[A-Za-z_$][\w$]*/.test(body);
  const types = declaresType ? body : `class Solution {\n${body}\n}`;
  return {
    code: `${imports}${types}\n\nclass ValidateMain {\n    public static void main(String[] args) {}\n}\n`,
    harness: "definitions",
  };
}

function csharpHarness(code: string): Harnessed {
  if (/\bstatic\s+(?:async\s+)?(?:void|int|Task(?:<int>)?)\s+Main\s*\(/.test(code))
    return { code, harness: "as-is" };
  const usings = /^\s*using\s+[\w.]+\s*;/m.test(code) ? "" : `${CSHARP_USINGS}\n`;
  const declaresType = /\b(?:class|struct|interface|enum|record|namespace)\s+[A-Za-z_]\w*/.test(code);
  const types = declaresType ? code : `public class Solution {\n${code}\n}`;
  return {
    code: `${usings}${types}\n\npublic static class ValidateMain {\n    public static void Main() {}\n}\n`,
    harness: "definitions",
  };
}

function goHarness(code: string): Harnessed {
  const hasMain = /^func\s+main\s*\(\s*\)/m.test(code);
  const packaged = /^\s*package\s+\w+/m.test(code);
  if (hasMain && /^\s*package\s+main\b/m.test(code)) return { code, harness: "as-is" };
  // a library package (or none) becomes main so that it links; its names are checked all the same
  const asMain = packaged
    ? code.replace(/^(\s*)package\s+\w+/m, "$1package main")
    : `package main\n\n${code}`;
  return {
    code: hasMain ? asMain : `${asMain}\n\nfunc main() {}\n`,
    harness: hasMain ? "as-is" : "definitions",
  };
}

function scalaHarness(code: string): Harnessed {
  if (/\bdef\s+main\s*\(|\bextends\s+App\b/.test(code)) return { code, harness: "as-is" };
  // Scala 2 allows only classes, traits and objects at the top level of a compiled file.
  const topLevelMembers = /^(?:def|val|var|lazy\s+val|type)\s/m.test(code);
  const types = topLevelMembers ? `object Solution {\n${code}\n}` : code;
  return {
    code: `${types}\n\nobject ValidateMain {\n  def main(args: Array[String]): Unit = {}\n}\n`,
    harness: "definitions",
  };
}
