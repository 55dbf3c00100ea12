import { describe, expect, it } from "vitest";
import { detectLanguage } from "../../pipeline/code/detect.js";

const samples: Array<[string, string]> = [
  ["python", "def add(a, b):\n    return a + b\n\nprint(add(1, 2))"],
  [
    "python",
    "import numpy as np\nfrom collections import Counter\n\nclass Stack:\n    def __init__(self):\n        self.items = []",
  ],
  ["javascript", "const add = (a, b) => a + b;\nconsole.log(add(1, 2));"],
  ["javascript", "function greet(name) {\n  return 'hi ' + name;\n}\nmodule.exports = greet;"],
  [
    "typescript",
    "interface Point { x: number; y: number }\nfunction norm(p: Point): number {\n  return Math.hypot(p.x, p.y);\n}",
  ],
  [
    "java",
    'import java.util.*;\n\npublic class Main {\n    public static void main(String[] args) {\n        System.out.println("hi");\n    }\n}',
  ],
  ["cpp", "#include <iostream>\nusing namespace std;\nint main() {\n    cout << 1 << endl;\n}"],
  ["c", '#include <stdio.h>\nint main(void) {\n    printf("%d\\n", 1);\n    return 0;\n}'],
  [
    "csharp",
    'using System;\nclass Program {\n    static void Main(string[] args) {\n        Console.WriteLine("hi");\n    }\n}',
  ],
  ["go", 'package main\n\nimport "fmt"\n\nfunc main() {\n\tx := 1\n\tfmt.Println(x)\n}'],
  [
    "rust",
    'use std::collections::HashMap;\nfn main() {\n    let mut m = HashMap::new();\n    m.insert(1, 2);\n    println!("{:?}", m);\n}',
  ],
  ["php", "<?php\nfunction add($a, $b) {\n    return $a + $b;\n}\necho add(1, 2);"],
  ["ruby", "def add(a, b)\n  a + b\nend\n\nputs add(1, 2)"],
  ["sql", "SELECT name, COUNT(*) FROM users WHERE age > 18 GROUP BY name;"],
  ["shell", "#!/bin/bash\necho hello\nfor f in *.txt; do\n  cat $f\ndone"],
  ["perl", 'use strict;\nuse warnings;\nmy $x = 1;\nprint "$x\\n";'],
  ["lua", "local function add(a, b)\n  return a + b\nend\nfor i, v in ipairs(t) do\n  print(v)\nend"],
  ["r", "library(dplyr)\nx <- c(1, 2, 3)\nmean(x)"],
  ["html", "<!DOCTYPE html>\n<html>\n<body><div>hi</div></body>\n</html>"],
  ["kotlin", "fun main() {\n    val x = 1\n    println(x)\n}"],
];

describe("detectLanguage", () => {
  it.each(samples)("recognises %s", (language, code) => {
    expect(detectLanguage(code)).toBe(language);
  });

  it("trusts a shebang over everything else", () => {
    expect(detectLanguage("#!/usr/bin/env python3\nx = 1")).toBe("python");
    expect(detectLanguage("#!/usr/bin/env node\nx = 1")).toBe("javascript");
  });

  it("says it does not know rather than guess", () => {
    expect(detectLanguage("hello world")).toBeUndefined();
    expect(detectLanguage("x = 1")).toBeUndefined();
    expect(detectLanguage("")).toBeUndefined();
  });
});
