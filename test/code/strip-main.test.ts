import { describe, expect, it } from "vitest";
import { removeMain } from "../../pipeline/code/strip-main.js";

describe("removeMain", () => {
  it("removes a Python main guard and keeps what follows it", () => {
    const code = "def f():\n    return 1\n\nif __name__ == '__main__':\n    print(f())\n\n    f()\nX = 2\n";
    expect(removeMain(code, "python")).toEqual({ code: "def f():\n    return 1\n\nX = 2\n", removed: true });
  });

  it("removes a C++ main with braces in strings, chars and comments", () => {
    const code = [
      "#include <iostream>",
      "int f() { return 1; }",
      "int main() {",
      "    std::cout << \"}\" << '}' << f(); // }",
      "    /* { */",
      "    return 0;",
      "}",
      "int g() { return 2; }",
    ].join("\n");
    expect(removeMain(code, "cpp")).toEqual({
      code: "#include <iostream>\nint f() { return 1; }\nint g() { return 2; }",
      removed: true,
    });
  });

  it("removes Java's main, and the class that only held it", () => {
    const code = [
      "class Solution {",
      "    public int f() { return 1; }",
      "    public static void main(String[] args) {",
      "        System.out.println(new Solution().f());",
      "    }",
      "}",
      "public class Main {",
      "    public static void main(String[] args) throws Exception {",
      "        System.out.println(1);",
      "    }",
      "}",
    ].join("\n");
    expect(removeMain(removeMain(code, "java").code, "java")).toEqual({
      code: "class Solution {\n    public int f() { return 1; }\n}\n",
      removed: true,
    });
  });

  it("removes Go, Rust and C# mains", () => {
    expect(
      removeMain('package main\nfunc f() int { return 1 }\nfunc main() {\n\tfmt.Println("{")\n}\n', "go")
        .code,
    ).toBe("package main\nfunc f() int { return 1 }\n");
    expect(
      removeMain("fn f<'a>(s: &'a str) -> &'a str { s }\nfn main() {\n    let c = '{';\n}\n", "rust").code,
    ).toBe("fn f<'a>(s: &'a str) -> &'a str { s }\n");
    const cs =
      'class S {\n  public int F() { return 1; }\n  static void Main(string[] args) {\n    Console.WriteLine(@"}");\n  }\n}';
    expect(removeMain(cs, "csharp").code).toBe("class S {\n  public int F() { return 1; }\n}");
  });

  it("removes Ruby's __FILE__ guard and Node's require.main block", () => {
    expect(removeMain("def f\n  1\nend\nif __FILE__ == $0\n  puts f\nend\n", "ruby").code).toBe(
      "def f\n  1\nend\n",
    );
    expect(
      removeMain("function f() {}\nif (require.main === module) {\n  f();\n}\n", "javascript").code,
    ).toBe("function f() {}\n");
  });

  it("removes Scala and Kotlin mains with an expression body, and braced ones", () => {
    const scala =
      "object Solution {\n  def f(): Int = 1\n\n  def main(args: Array[String]): Unit = println(f())\n}\n";
    expect(removeMain(scala, "scala")).toEqual({
      code: "object Solution {\n  def f(): Int = 1\n\n}\n",
      removed: true,
    });
    expect(
      removeMain("object M {\n  def main(args: Array[String]): Unit = {\n    println(1)\n  }\n}\n", "scala")
        .code,
    ).toBe("");
    expect(removeMain("fun f() = 1\nfun main() = println(f())\n", "kotlin").code).toBe("fun f() = 1\n");
    // Scala's procedure syntax has no `=`, and what follows is not a body to remove.
    expect(removeMain("def main(args: Array[String])\nval x = 1\n", "scala").removed).toBe(false);
  });

  it("leaves code without a main alone", () => {
    expect(removeMain("def f():\n    pass\n", "python")).toEqual({
      code: "def f():\n    pass\n",
      removed: false,
    });
    expect(removeMain("int f() { return 0; }", "cpp").removed).toBe(false);
    expect(removeMain("<?php echo 1;", "php").removed).toBe(false);
  });
});
