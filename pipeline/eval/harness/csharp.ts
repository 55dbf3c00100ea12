// C# harness with BabelCode's type mapping (int, long, float, bool, char, string, List<T>,
// HashSet<T>, Dictionary<K, V>, and `decimal` for double, as BabelCode writes it); the entry point is a
// method of a class (default `Solution`), called on a new instance.
import { CODE_PLACEHOLDER, defineHarness } from "./harness.js";
import { cLikeScalars, indentRest, literals, quote, typeNamer } from "./literals.js";

export const csharpType = typeNamer(["bool", "int", "long", "float", "decimal", "char", "string"], {
  list: (e) => `List<${e}>`,
  set: (e) => `HashSet<${e}>`,
  map: (k, v) => `Dictionary<${k}, ${v}>`,
});

export const csharpLiteral = literals({
  ...cLikeScalars("C#"),
  list: (items, type) => `new ${csharpType(type)}{${items.join(", ")}}`,
  set: (items, type) => `new ${csharpType(type)}{${items.join(", ")}}`,
  map: (entries, type) => `new ${csharpType(type)}{${entries.map(([k, v]) => `{${k}, ${v}}`).join(", ")}}`,
});

const HEADER = `using System;
using System.Collections;
using System.Collections.Generic;
using System.Linq;
using System.Text;
`;

const HELPERS = `
    static bool BcIsNumber(object value) {
      return value is int || value is long || value is short || value is float || value is double || value is decimal;
    }

    static bool BcEqual(object actual, object expected, double tol) {
      if (expected == null || actual == null) return actual == expected;
      if (expected is float || expected is double || expected is decimal) {
        return BcIsNumber(actual) && Math.Abs(Convert.ToDouble(actual) - Convert.ToDouble(expected)) <= tol;
      }
      if (expected is int || expected is long) {
        return (actual is int || actual is long || actual is short) && Convert.ToInt64(actual) == Convert.ToInt64(expected);
      }
      if (expected is string || expected is char || expected is bool) return expected.Equals(actual);
      if (expected is IDictionary) {
        var e = (IDictionary)expected;
        var a = actual as IDictionary;
        if (a == null || a.Count != e.Count) return false;
        foreach (DictionaryEntry entry in e) {
          if (!a.Contains(entry.Key) || !BcEqual(a[entry.Key], entry.Value, tol)) return false;
        }
        return true;
      }
      var type = expected.GetType();
      if (type.IsGenericType && type.GetGenericTypeDefinition() == typeof(HashSet<>)) {
        var a = actual as IEnumerable;
        if (a == null || actual is string) return false;
        var want = new HashSet<object>(((IEnumerable)expected).Cast<object>());
        var got = a.Cast<object>().ToList();
        return got.Count == want.Count && want.SetEquals(got);
      }
      if (expected is IList) {
        var e = (IList)expected;
        var a = actual as IList;
        if (a == null || a.Count != e.Count) return false;
        for (int i = 0; i < e.Count; i++) if (!BcEqual(a[i], e[i], tol)) return false;
        return true;
      }
      return expected.Equals(actual);
    }

    static void BcCheck(string prefix, Func<object> thunk, object expected, double tol) {
      string result;
      try {
        result = BcEqual(thunk(), expected, tol) ? "PASSED" : "FAILED";
      } catch (Exception error) {
        result = error.GetType().Name;
      }
      Console.WriteLine(prefix + result);
    }
`;

export const csharpHarness = defineHarness({
  language: "csharp",
  requiresClass: true,
  naming: "pascal",
  literal: csharpLiteral,
  check: (tc, tol) => `BcCheck(${quote(tc.prefix, "csharp")}, () => ${tc.call}, ${tc.expected}, ${tol});`,
  program: (checks) =>
    [
      HEADER,
      CODE_PLACEHOLDER,
      "",
      "// ---- evaluation harness ----",
      "namespace BabelEvaluation {",
      "  class QuestionEvaluator {",
      "    static void Main(string[] args) {",
      `      ${indentRest(checks.join("\n"), 6)}`,
      "    }",
      HELPERS,
      "  }",
      "}",
      "",
    ].join("\n"),
  callee(fn, cls, code) {
    // A prediction that wraps its class in a namespace is called through it.
    const namespace = /^\s*namespace\s+([\w.]+)\s*[{;]/m.exec(code)?.[1];
    return `new global::${namespace ? `${namespace}.` : ""}${cls ?? "Solution"}().${fn}`;
  },
});
