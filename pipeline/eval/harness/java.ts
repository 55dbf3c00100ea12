// Java harness with BabelCode's type mapping (Integer, Long, Float, Double, Boolean, Character,
// String, ArrayList<T>, HashSet<T>, Map<K, V>); the entry point is a method of a class (default
// `Solution`). Harness classes are not public, so a prediction's `public class Solution` keeps
// naming the file, and the launcher finds `main` in QuestionEvaluator.
import type { SchemaType } from "../schema-type.js";
import { CODE_PLACEHOLDER, defineHarness } from "./harness.js";
import { cLikeScalars, indentRest, literals, quote, typeNamer } from "./literals.js";

export const javaType = typeNamer(["Boolean", "Integer", "Long", "Float", "Double", "Character", "String"], {
  list: (e) => `ArrayList<${e}>`,
  set: (e) => `HashSet<${e}>`,
  map: (k, v) => `Map<${k}, ${v}>`,
});

function javaCollection(concrete: string, element: SchemaType, items: string[]): string {
  if (items.length === 0) return `new ${concrete}<${javaType(element)}>()`;
  return `new ${concrete}<${javaType(element)}>(Arrays.asList(${items.join(", ")}))`;
}

export const javaLiteral = literals({
  ...cLikeScalars("Java"),
  list: (items, type) => javaCollection("ArrayList", type.element, items),
  set: (items, type) => javaCollection("HashSet", type.element, items),
  map(entries, type) {
    const generics = `${javaType(type.key)}, ${javaType(type.value)}`;
    if (entries.length === 0) return `new HashMap<${generics}>()`;
    return `QuestionEvaluator.<${generics}>bcMap(${entries.map(([k, v]) => `Map.entry(${k}, ${v})`).join(", ")})`;
  },
});

const HEADER = `import java.util.*;
import java.util.function.*;
import java.util.stream.*;
import java.math.*;
`;

// main comes first in the class: the sandbox launches the class declared last before `static void main`.
const HELPERS = `
  static boolean bcEqual(Object actual, Object expected, double tol) {
    if (expected == null || actual == null) return actual == expected;
    if (expected instanceof Double || expected instanceof Float) {
      if (!(actual instanceof Number)) return false;
      return Math.abs(((Number) actual).doubleValue() - ((Number) expected).doubleValue()) <= tol;
    }
    if (expected instanceof Number) {
      if (!(actual instanceof Number) || actual instanceof Double || actual instanceof Float) return false;
      return ((Number) actual).longValue() == ((Number) expected).longValue();
    }
    if (expected instanceof List) {
      if (!(actual instanceof List)) return false;
      List<?> a = (List<?>) actual;
      List<?> e = (List<?>) expected;
      if (a.size() != e.size()) return false;
      for (int i = 0; i < e.size(); i++) if (!bcEqual(a.get(i), e.get(i), tol)) return false;
      return true;
    }
    if (expected instanceof Set) return actual instanceof Set && expected.equals(actual);
    if (expected instanceof Map) {
      if (!(actual instanceof Map)) return false;
      Map<?, ?> a = (Map<?, ?>) actual;
      Map<?, ?> e = (Map<?, ?>) expected;
      if (a.size() != e.size()) return false;
      for (Map.Entry<?, ?> entry : e.entrySet()) {
        if (!a.containsKey(entry.getKey()) || !bcEqual(a.get(entry.getKey()), entry.getValue(), tol)) return false;
      }
      return true;
    }
    return expected.equals(actual);
  }

  @SafeVarargs
  static <K, V> HashMap<K, V> bcMap(Map.Entry<K, V>... entries) {
    HashMap<K, V> map = new HashMap<>();
    for (Map.Entry<K, V> entry : entries) map.put(entry.getKey(), entry.getValue());
    return map;
  }

  static void bcCheck(String prefix, BcThunk thunk, Object expected, double tol) {
    String result;
    try {
      result = bcEqual(thunk.call(), expected, tol) ? "PASSED" : "FAILED";
    } catch (Throwable error) {
      result = error.getClass().getSimpleName();
    }
    System.out.println(prefix + result);
  }
}

interface BcThunk {
  Object call() throws Throwable;
}
`;

export const javaHarness = defineHarness({
  language: "java",
  requiresClass: true,
  naming: "camel",
  literal: javaLiteral,
  check: (tc, tol) => `bcCheck(${quote(tc.prefix, "java")}, () -> ${tc.call}, ${tc.expected}, ${tol});`,
  program: (checks) =>
    [
      HEADER,
      CODE_PLACEHOLDER,
      "",
      "// ---- evaluation harness ----",
      "class QuestionEvaluator {",
      "  public static void main(String[] args) {",
      `    ${indentRest(checks.join("\n"), 4)}`,
      "  }",
      HELPERS,
    ].join("\n"),
  prepare: (code) => ({ prelude: "", body: code.replace(/^\s*package\s+[\w.]+\s*;[ \t]*\r?\n?/m, "") }),
  callee: (fn, cls) => `new ${cls ?? "Solution"}().${fn}`,
});
