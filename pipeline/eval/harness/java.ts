// Java harness with BabelCode's type mapping (Integer, Long, Float, Double, Boolean, Character,
// String, ArrayList<T>, HashSet<T>, Map<K, V>); the entry point is a method of a class (default
// `Solution`). Harness classes are not public, so a prediction's `public class Solution` keeps
// naming the file, and the launcher finds `main` in QuestionEvaluator.
import type { SchemaType } from "../schema-type.js";
import { tolerance } from "../schema-type.js";
import type { Question } from "../types.js";
import { CALLEE_PLACEHOLDER, CODE_PLACEHOLDER, type Harness, testPrefix } from "./harness.js";
import { floatText, indentRest, mapEntries, quote, requireCharWidth } from "./literals.js";

export function javaType(type: SchemaType): string {
  switch (type.kind) {
    case "boolean":
      return "Boolean";
    case "integer":
      return "Integer";
    case "long":
      return "Long";
    case "float":
      return "Float";
    case "double":
      return "Double";
    case "character":
      return "Character";
    case "string":
      return "String";
    case "list":
      return `ArrayList<${javaType(type.element)}>`;
    case "set":
      return `HashSet<${javaType(type.element)}>`;
    case "map":
      return `Map<${javaType(type.key)}, ${javaType(type.value)}>`;
  }
}

export function javaLiteral(value: unknown, type: SchemaType): string {
  switch (type.kind) {
    case "boolean":
      return value ? "true" : "false";
    case "integer":
      return String(value);
    case "long":
      return `${value}L`;
    case "float":
      return `${floatText(value as number)}f`;
    case "double":
      return floatText(value as number);
    case "character":
      requireCharWidth(value as string, 16, "Java");
      return quote(value as string, "java", "'");
    case "string":
      return quote(value as string, "java");
    case "list":
    case "set": {
      const items = (value as unknown[]).map((v) => javaLiteral(v, type.element));
      const concrete = type.kind === "list" ? "ArrayList" : "HashSet";
      if (items.length === 0) return `new ${concrete}<${javaType(type.element)}>()`;
      return `new ${concrete}<${javaType(type.element)}>(Arrays.asList(${items.join(", ")}))`;
    }
    case "map": {
      const key = javaType(type.key);
      const valueType = javaType(type.value);
      const entries = mapEntries(value, type).map(
        ([k, v]) => `Map.entry(${javaLiteral(k, type.key)}, ${javaLiteral(v, type.value)})`,
      );
      if (entries.length === 0) return `new HashMap<${key}, ${valueType}>()`;
      return `QuestionEvaluator.<${key}, ${valueType}>bcMap(${entries.join(", ")})`;
    }
  }
}

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

export const javaHarness: Harness = {
  language: "java",
  sandboxId: "java",
  requiresClass: true,
  generate(question: Question): string {
    const tol = tolerance(question.returnType);
    const calls = question.testCases.map((tc) => {
      const args = question.params.map((p) => javaLiteral(tc.inputs[p.name], p.type)).join(", ");
      const expected = javaLiteral(tc.outputs, question.returnType);
      return `bcCheck(${quote(testPrefix(tc.idx), "java")}, () -> ${CALLEE_PLACEHOLDER}(${args}), ${expected}, ${tol});`;
    });
    return [
      HEADER,
      CODE_PLACEHOLDER,
      "",
      "// ---- evaluation harness ----",
      "class QuestionEvaluator {",
      "  public static void main(String[] args) {",
      `    ${indentRest(calls.join("\n"), 4)}`,
      "  }",
      HELPERS,
    ].join("\n");
  },
  prepare: (code) => ({ prelude: "", body: code.replace(/^\s*package\s+[\w.]+\s*;[ \t]*\r?\n?/m, "") }),
  callee: (fn, cls) => `new ${cls ?? "Solution"}().${fn}`,
};
