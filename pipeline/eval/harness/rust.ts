// Rust harness with BabelCode's type mapping (i32, i64, f32, f64, bool, char, String, Vec<T>,
// HashSet<T>, HashMap<K, V>). Literals leave their element types to inference from the entry
// point's signature; a panic is caught per test case and reported as `panic`.
import type { SchemaType } from "../schema-type.js";
import type { Question } from "../types.js";
import {
  CALLEE_PLACEHOLDER,
  CODE_PLACEHOLDER,
  type Harness,
  PRELUDE_PLACEHOLDER,
  type PreparedCode,
  testPrefix,
} from "./harness.js";
import { floatText, indentRest, mapEntries, quote } from "./literals.js";

export function rustType(type: SchemaType): string {
  switch (type.kind) {
    case "boolean":
      return "bool";
    case "integer":
      return "i32";
    case "long":
      return "i64";
    case "float":
      return "f32";
    case "double":
      return "f64";
    case "character":
      return "char";
    case "string":
      return "String";
    case "list":
      return `Vec<${rustType(type.element)}>`;
    case "set":
      return `HashSet<${rustType(type.element)}>`;
    case "map":
      return `HashMap<${rustType(type.key)}, ${rustType(type.value)}>`;
  }
}

export function rustLiteral(value: unknown, type: SchemaType): string {
  switch (type.kind) {
    case "boolean":
      return value ? "true" : "false";
    case "integer":
    case "long":
      return String(value);
    case "float":
    case "double":
      return floatText(value as number);
    case "character":
      return quote(value as string, "rust", "'");
    case "string":
      return `String::from(${quote(value as string, "rust")})`;
    case "list":
      return `vec![${(value as unknown[]).map((v) => rustLiteral(v, type.element)).join(", ")}]`;
    case "set":
      return `std::collections::HashSet::from([${(value as unknown[]).map((v) => rustLiteral(v, type.element)).join(", ")}])`;
    case "map":
      return `std::collections::HashMap::from([${mapEntries(value, type)
        .map(([k, v]) => `(${rustLiteral(k, type.key)}, ${rustLiteral(v, type.value)})`)
        .join(", ")}])`;
  }
}

const DRIVER = `
// ---- evaluation harness ----
trait BcEq {
    fn bc_eq(&self, other: &Self) -> bool;
}
macro_rules! bc_eq_exact {
    ($($t:ty),*) => { $(impl BcEq for $t { fn bc_eq(&self, other: &Self) -> bool { self == other } })* };
}
bc_eq_exact!(i32, i64, bool, char, String);
impl BcEq for f32 {
    fn bc_eq(&self, other: &Self) -> bool { ((*self as f64) - (*other as f64)).abs() <= 1e-6 }
}
impl BcEq for f64 {
    fn bc_eq(&self, other: &Self) -> bool { (self - other).abs() <= 1e-9 }
}
impl<T: BcEq> BcEq for Vec<T> {
    fn bc_eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().zip(other.iter()).all(|(a, b)| a.bc_eq(b))
    }
}
impl<T: Eq + std::hash::Hash> BcEq for std::collections::HashSet<T> {
    fn bc_eq(&self, other: &Self) -> bool { self == other }
}
impl<K: Eq + std::hash::Hash, V: BcEq> BcEq for std::collections::HashMap<K, V> {
    fn bc_eq(&self, other: &Self) -> bool {
        self.len() == other.len() && other.iter().all(|(k, v)| self.get(k).map_or(false, |got| got.bc_eq(v)))
    }
}
fn bc_check<T: BcEq, F: FnOnce() -> T>(prefix: &str, thunk: F, expected: T) {
    let result = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(thunk)) {
        Ok(actual) => if actual.bc_eq(&expected) { "PASSED" } else { "FAILED" },
        Err(_) => "panic",
    };
    println!("{}{}", prefix, result);
}
`;

/** Whether the prediction already imports `name` from std::collections (a second `use` would clash). */
function importsCollection(code: string, name: string): boolean {
  return new RegExp(
    `\\buse\\s+std::collections::(?:\\*|${name}\\b|\\{[^}]*(?:\\b${name}\\b|\\*)[^}]*\\})`,
  ).test(code);
}

export const rustHarness: Harness = {
  language: "rust",
  sandboxId: "rust",
  requiresClass: false,
  generate(question: Question): string {
    const calls = question.testCases.map((tc) => {
      const args = question.params.map((p) => rustLiteral(tc.inputs[p.name], p.type)).join(", ");
      const expected = rustLiteral(tc.outputs, question.returnType);
      return `bc_check(${quote(testPrefix(tc.idx), "rust")}, || ${CALLEE_PLACEHOLDER}(${args}), ${expected});`;
    });
    return [
      PRELUDE_PLACEHOLDER,
      "#![allow(unused_imports, dead_code, unused_variables, unused_mut, non_snake_case)]",
      "",
      CODE_PLACEHOLDER,
      DRIVER,
      "fn main() {",
      `    ${indentRest(calls.join("\n"), 4)}`,
      "}",
      "",
    ].join("\n");
  },
  prepare(code: string): PreparedCode {
    // Inner attributes (`#![...]`) must open the crate, so they move to the top.
    const attributes = code.match(/^[ \t]*#!\[[^\]]*\][ \t]*$/gm) ?? [];
    let body = code.replace(/^[ \t]*#!\[[^\]]*\][ \t]*\r?\n?/gm, "");
    // BabelCode's Rust header brings HashMap and HashSet into scope; predictions may rely on it.
    const uses = ["HashMap", "HashSet"]
      .filter((name) => !importsCollection(body, name))
      .map((name) => `use std::collections::${name};`);
    if (uses.length) body = `${uses.join("\n")}\n${body}`;
    return { prelude: attributes.map((a) => a.trim()).join("\n"), body };
  },
  callee: (fn, cls) => (cls ? `${cls}::${fn}` : fn),
};
